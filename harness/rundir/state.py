"""The loop state file. Counters are derived from the ledger, so a crash between
two writes is repaired on the next open instead of drifting."""

from __future__ import annotations

from harness.rundir import ledger
from harness.rundir.layout import RunPaths
from harness.rundir.records import now_iso, read_record, write_record


def derive(rows: list[dict], status: str = "ready", stop_reason: str | None = None) -> dict:
    done = ledger.committed(rows)
    best = ledger.best_row(rows)
    return {
        "schema_version": 1,
        "status": status,
        "next_iteration": (max(r["iteration"] for r in done) + 1) if done else 1,
        "consecutive_skips": ledger.trailing_skips(rows),
        "attempts": len(rows),
        "best": {"iteration": best["iteration"], "score": (best.get("primary") or {}).get("mean"),
                 "vs_parent": ledger.verdict_of(best)} if best else None,
        "stop_reason": stop_reason,
        "updated": now_iso(),
    }


def read(paths: RunPaths) -> dict:
    return read_record("state", paths.state)


def write(paths: RunPaths, state: dict) -> None:
    state = dict(state, updated=now_iso())
    write_record("state", paths.state, state)


_KEEP = object()


def refresh(paths: RunPaths, *, status: str | None = None, stop_reason=_KEEP) -> dict:
    """Recompute derived counters from the ledger; keep or set status / stop_reason."""
    try:
        old = read(paths)
    except Exception:  # a damaged state file is rebuilt from the ledger
        old = {"status": "ready", "stop_reason": None}
    state = derive(
        ledger.read_rows(paths.ledger),
        status=status or old["status"],
        stop_reason=old["stop_reason"] if stop_reason is _KEEP else stop_reason,
    )
    write(paths, state)
    return state


DERIVED = ("next_iteration", "consecutive_skips", "attempts", "best")


def drift(paths: RunPaths) -> list[str]:
    """Where state.json disagrees with what the ledger implies (empty: it agrees)."""
    state = read(paths)
    expected = derive(ledger.read_rows(paths.ledger), state["status"], state["stop_reason"])
    return [f"state.json {key}={state[key]!r}, ledger implies {expected[key]!r}"
            for key in DERIVED if state[key] != expected[key]]

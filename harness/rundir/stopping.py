"""When a run stops, and recording why.

One rule for the offline loop, `architect status` and `architect end` (what a
skill-driven loop calls when it stops): a STOP file (its text is the reason),
the iteration cap (the manifest's, or goal.md's when lower), too many consecutive skips, the cost and token caps (spent
over every attempt's evaluations), or a variant's own verdict (`--reason`)."""

from __future__ import annotations

from harness.rundir import gitops, goal, ledger, state
from harness.rundir.layout import RunPaths

END_TRAILER = "Architect-Attempts"


def spent(rows: list[dict]) -> dict:
    """Model cost (USD) and tokens of every attempt's evaluations so far."""
    cost = sum(r.get("cost_usd") or 0.0 for r in rows)
    tokens = sum(r.get("tokens") or 0 for r in rows)
    return {"cost_usd": round(cost, 6), "tokens": int(tokens)}


def stop_file_text(paths: RunPaths) -> str:
    try:
        return " ".join(paths.stop_file.read_text(encoding="utf-8", errors="replace").split())[:300]
    except OSError:
        return ""


def due(paths: RunPaths, manifest: dict, rows: list[dict], target: int | None = None) -> dict | None:
    """The first stop condition that holds, as {"code", "reason"}; None: go on."""
    caps = manifest["caps"]
    done = len(ledger.committed(rows)) - 1
    if paths.stop_file.exists():
        text = stop_file_text(paths)
        return {"code": "stop_file", "reason": "stop_file" + (f": {text}" if text else "")}
    cap = goal.iteration_cap(paths, manifest)
    if done >= cap["cap"]:
        lowered = f" (goal.md lowers the run's cap of {cap['manifest']})" if cap["cap"] < cap["manifest"] else ""
        return {"code": "max_iterations", "reason": f"max_iterations: {done} of {cap['cap']} committed{lowered}"}
    if target is not None and done >= target:
        return {"code": "iterations_done", "reason": "iterations_done"}
    skips = ledger.trailing_skips(rows)
    if skips >= caps["max_consecutive_skips"]:
        return {"code": "max_consecutive_skips",
                "reason": f"max_consecutive_skips: {skips} discarded attempts in a row"}
    used = spent(rows)
    if caps.get("max_cost_usd") is not None and used["cost_usd"] >= caps["max_cost_usd"]:
        return {"code": "max_cost_usd",
                "reason": f"max_cost_usd: spent ${used['cost_usd']:.4f} of ${caps['max_cost_usd']:.4f}"}
    if caps.get("max_tokens") is not None and used["tokens"] >= caps["max_tokens"]:
        return {"code": "max_tokens", "reason": f"max_tokens: spent {used['tokens']} of {caps['max_tokens']} tokens"}
    return None


def end(paths: RunPaths, manifest: dict, reason: str | None = None) -> dict:
    """Record that the run stopped: status "stopped" with the reason (the given
    one, e.g. a variant's verdict, else the stop condition that holds), the STOP
    file consumed (its text is kept in the reason), state committed."""
    rows = ledger.read_rows(paths.ledger)
    condition = due(paths, manifest, rows)
    if reason:
        text = " ".join(reason.split())
        why = text if condition is None else f"{text} ({condition['reason']})"
    elif condition is not None:
        why = condition["reason"]
    else:
        return {"stopped": False, "stop_reason": None, "state": state.read(paths),
                "message": "no stop condition holds (no STOP file, caps not reached): the loop goes on"}
    if paths.stop_file.exists():
        paths.stop_file.unlink()  # honoured once, like the offline loop: a later resume continues
    final = state.refresh(paths, status="stopped", stop_reason=why)
    gitops.commit_pending(paths.root, f"run stopped: {why}", (END_TRAILER, final["attempts"]))
    return {"stopped": True, "stop_reason": why, "state": final}

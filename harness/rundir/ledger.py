"""The ledger: one JSON line per attempted iteration, the first thing a person reads."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from harness.fileio import read_jsonl, write_text_atomic
from harness.rundir.records import check_record


def read_rows(path: Path) -> list[dict]:
    rows = read_jsonl(path)
    for number, row in enumerate(rows, start=1):
        check_record("ledger_row", row, f"{path}:{number}")
    return rows


def render(rows: list[dict]) -> str:
    return "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows)


def append_row(path: Path, row: dict) -> list[dict]:
    """Rewrite the whole (small) ledger atomically so a crash never leaves half a line."""
    check_record("ledger_row", row, path)
    rows = read_rows(path)
    rows.append(row)
    write_text_atomic(path, render(rows))
    return rows


def committed(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["status"] == "committed"]


def trailing_skips(rows: list[dict]) -> int:
    """Failed attempts since the last committed iteration. The slots of a
    parallel iteration that another slot won are not skips: a losing slot
    (evaluated, archived) and a failed one (which enters no memory) alike."""
    count = 0
    won = set()  # iterations committed so far, in attempt order
    sibling_won = []
    for row in rows:
        if row["status"] == "committed":
            won.add(row["iteration"])
        sibling_won.append(row["status"] == "discarded" and bool(row.get("slot")) and row["iteration"] in won)
    for row, forgiven in zip(reversed(rows), reversed(sibling_won)):
        if row.get("lost_slot") or forgiven:
            continue
        if row["status"] != "discarded":
            break
        count += 1
    return count


def failed(row: dict) -> bool:
    """A failed attempt (check or smoke failure, incomplete evaluation, given up):
    it counts as a skip and enters no variant's memory, archive, experience or
    duplicate check."""
    return row["status"] == "discarded" and not row.get("lost_slot")


# The paired verdict against the parent ranks first: a gain the test confirmed
# outranks a higher mean it could not tell from noise (iteration 0 and rows
# written before the verdict was recorded count as indistinguishable).
VERDICT_RANK = {"better": 2, "indistinguishable": 1, None: 1, "worse": 0}
BEST_RULE = ("paired verdict against the parent first (better > indistinguishable > worse), "
             "then the higher mean, then the earlier iteration")


def verdict_of(row: dict) -> str | None:
    return (row.get("vs_parent") or {}).get("verdict")


def ranked(rows: list[dict]) -> list[dict]:
    """Committed rows with a primary mean, best first by BEST_RULE."""
    scored = [r for r in committed(rows) if (r.get("primary") or {}).get("mean") is not None]
    return sorted(scored, key=lambda r: (-VERDICT_RANK.get(verdict_of(r), 1), -r["primary"]["mean"], r["iteration"]))


def best_row(rows: list[dict]) -> dict | None:
    """The best committed row by BEST_RULE (the first committed one when none is scored)."""
    order = ranked(rows)
    if order:
        return order[0]
    done = committed(rows)
    return done[0] if done else None


def axis_counts(rows: list[dict]) -> tuple[Counter, int]:
    """Iterations per axis over committed iterations after 0, and how many of them are tagged."""
    counts = Counter(axis for row in committed(rows) if row["iteration"] > 0 for axis in row.get("axes") or [])
    tagged = sum(1 for row in committed(rows) if row["iteration"] > 0 and row.get("axes"))
    return counts, tagged


def axis_share(rows: list[dict]) -> dict | None:
    """Most-used axis over committed iterations after 0 and its share: the local-basin signal
    (`tied`: every axis used as often, the first of them `axis`)."""
    counts, tagged = axis_counts(rows)
    if not counts or not tagged:
        return None
    axis, n = counts.most_common(1)[0]
    return {"axis": axis, "iterations": n, "share": round(n / tagged, 3),
            "tied": [a for a, k in counts.most_common() if k == n]}

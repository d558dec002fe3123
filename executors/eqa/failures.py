"""What kind of failure an EQA episode is (its `failure_kind` hook, see
harness.evaluation.failures): `unanswered` when no valid answer was given,
`wrong_answer` otherwise; every episode is grouped by its question type."""

from __future__ import annotations


def failure_kind(record: dict) -> dict:
    m = record.get("metrics") or {}
    group = m.get("type") if isinstance(m.get("type"), str) else None
    if "answered" not in m:
        return {"group": group}
    if not m["answered"]:
        invalid = m.get("invalid_answers") or 0
        return {"group": group, "kind": "unanswered",
                "detail": "no valid answer" + (f" ({invalid} invalid)" if invalid else "")}
    return {"group": group, "kind": "wrong_answer", "detail": f"answered {m.get('answer')}, truth {m.get('truth')}"}

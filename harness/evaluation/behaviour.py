"""Whether a candidate behaved exactly like another on the episodes both ran:
the same outcome (success, termination, steps) and the same actions at every
tick (read from the episode logs). A child that passes `check` (its live graph
differs) can still act identically on every episode of the tier; its score
then says nothing about its change."""

from __future__ import annotations

from pathlib import Path

from harness.errors import UserError

OUTCOME = ("success", "termination", "steps")


def _actions(eval_dir: Path, record: dict):
    from harness.evaluation.trace import actions_by_tick, read_log

    if not record.get("log"):
        return None
    try:
        return actions_by_tick(read_log(eval_dir / record["log"])[1])
    except UserError:
        return None


def same_behaviour(a: dict, a_dir: Path, b: dict, b_dir: Path) -> dict:
    """{identical, episodes (shared), first_difference: {episode_id, why} | None} of B against A
    (metrics.json documents and their folders); no shared episode is not identical."""
    theirs = {str(r["episode_id"]): r for r in a.get("episodes") or []}
    shared = [(theirs[str(r["episode_id"])], r) for r in b.get("episodes") or [] if str(r["episode_id"]) in theirs]

    def different(episode_id: str, why: str) -> dict:
        return {"identical": False, "episodes": len(shared), "first_difference": {"episode_id": episode_id, "why": why}}

    if not shared:
        return {"identical": False, "episodes": 0, "first_difference": None}
    for ra, rb in shared:
        changed = [k for k in OUTCOME if ra.get(k) != rb.get(k)]
        if changed:
            return different(str(rb["episode_id"]), "outcome differs: " + ", ".join(changed))
    for ra, rb in shared:
        acts_a, acts_b = _actions(a_dir, ra), _actions(b_dir, rb)
        if acts_a is None or acts_b is None:
            return different(str(rb["episode_id"]), "no readable episode log to compare actions")
        if acts_a != acts_b:
            tick = next(t for t in sorted(set(acts_a) | set(acts_b)) if acts_a.get(t) != acts_b.get(t))
            return different(str(rb["episode_id"]), f"actions differ at tick {tick}")
    return {"identical": True, "episodes": len(shared), "first_difference": None}


def note(result: dict, parent: int | str) -> str:
    """The warning for an identical result (empty otherwise)."""
    if not result["identical"]:
        return ""
    return (f"behaviour identical to parent {parent} on all {result['episodes']} shared episodes "
            "(same outcomes and actions): the change had no effect there")

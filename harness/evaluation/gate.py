"""The smoke gate: a cheap verdict on whether a candidate is worth a full evaluation."""

from __future__ import annotations


def smoke_gate(metrics: dict) -> dict:
    """`{"passed": bool, "reasons": [...]}` — clean exit, >= 1 step in every
    episode, a valid primary metric, and a complete evaluation."""
    reasons: list[str] = []
    episodes = metrics.get("episodes", [])
    if not episodes:
        reasons.append("no episodes were run")
    if not metrics.get("complete", False):
        reasons.append(
            f"evaluation incomplete: {metrics.get('infra_failures', 0)} infrastructure failure(s)"
        )
    for rec in episodes:
        eid = rec.get("episode_id")
        if rec.get("infra_error"):
            continue  # already counted as incompleteness
        if rec.get("error") or rec.get("termination") == "node_error":
            first = (rec.get("error") or "").strip().splitlines()
            reasons.append(f"episode {eid}: unclean exit ({rec.get('termination')}): {first[-1] if first else 'error'}")
        if not rec.get("steps"):
            reasons.append(f"episode {eid}: took no simulator step (termination {rec.get('termination')})")
    primary = metrics.get("primary", {})
    mean = primary.get("mean")
    if not isinstance(mean, (int, float)) or mean != mean:  # None or NaN
        reasons.append(f"primary metric {primary.get('metric')!r} has no valid value")
    return {"passed": not reasons, "reasons": reasons}

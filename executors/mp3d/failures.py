"""What kind of failure a navigation episode is, from its R2R metrics (the
`failure_kind` hook of mapgpt and smartway, see harness.evaluation.failures).

Of a failed episode: `never_stopped` when it ended without the agent's stop;
`passed_goal_stopped_elsewhere` when its path came within the success radius
of the goal (oracle success) but it stopped outside it; otherwise, when it
travelled less than the reference path's length, `stopped_early` if the goal is
no farther than the length it had left (plus the success radius: short of the
goal, as on the way there) and `stopped_off_route` if it is (it went elsewhere);
`stopped_past_goal` when it travelled at least that far without coming within
the radius."""

from __future__ import annotations

from executors.mp3d.metrics import ERROR_MARGIN


def failure_kind(record: dict) -> dict:
    m = record.get("metrics") or {}
    if not all(isinstance(m.get(k), (int, float)) for k in ("nav_error", "trajectory_length", "reference_length")):
        return {}
    where = f"stopped {m['nav_error']:.1f} m from the goal"
    travelled = f"travelled {m['trajectory_length']:.1f} m of the reference path's {m['reference_length']:.1f} m"
    if not m.get("stopped"):
        return {"kind": "never_stopped",
                "detail": f"ended without a stop ({m.get('ended') or record.get('termination')}), "
                          f"{m['nav_error']:.1f} m from the goal"}
    if m.get("oracle_success"):
        closest = f"came within {m['oracle_error']:.1f} m" if isinstance(m.get("oracle_error"), (int, float)) else \
            f"came within {ERROR_MARGIN:g} m"
        return {"kind": "passed_goal_stopped_elsewhere", "detail": f"{closest} of the goal, {where}"}
    left = m["reference_length"] - m["trajectory_length"]
    if left > 0:
        if m["nav_error"] <= left + ERROR_MARGIN:
            return {"kind": "stopped_early", "detail": f"{travelled}, {where}"}
        return {"kind": "stopped_off_route",
                "detail": f"{travelled}, {where}: farther than the {left:.1f} m left of the reference length"}
    return {"kind": "stopped_past_goal",
            "detail": f"{travelled}, never within {ERROR_MARGIN:g} m of the goal, {where}"}

"""Context harness: what the planner sees of the episode so far.

`history` is a list of rounds {"round", "decision", "outcome", "observation"}:
the subgoal the planner gave, the simulator feedback after it ({"steps",
"reward", "tick"}) and the scene afterwards (a JSON line of object positions
and the gripper).
"""

RECENT = 3


def build_context(history):
    lines = ["Rounds so far: %d" % len(history)]
    if history:
        lines.append("Recent subgoals:")
        for item in history[-RECENT:]:
            lines.append("- %s" % item.get("decision"))
        lines.append("Scene now: %s" % history[-1].get("observation"))
    return "\n".join(lines)

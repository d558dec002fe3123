"""Context harness: what the planner sees of the episode so far.

`history` is a list of rounds {"round", "decision", "outcome", "observation"}:
the command the planner gave, the simulator feedback after it ({"steps",
"reward", "tick"}) and the gripper state afterwards ({"position",
"quaternion", "fingers", "opening"}).
"""

RECENT = 3


def build_context(history):
    lines = ["Rounds so far: %d" % len(history)]
    if history:
        lines.append("Recent commands:")
        for item in history[-RECENT:]:
            lines.append("- %s" % item.get("decision"))
        gripper = history[-1].get("observation")
        if isinstance(gripper, dict):
            lines.append("Gripper opening now: %s m" % gripper.get("opening"))
    return "\n".join(lines)

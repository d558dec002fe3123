"""Context harness: what the planner sees of the episode so far.

`history` is a list of rounds {"round", "decision", "outcome", "observation"}:
the subgoal the planner gave, the simulator feedback after it ({"actions",
"blocked", "steps"}) and the view afterwards in words ("You see: ...").
"""

RECENT = 3


def build_context(history):
    finished = 0
    for item in history:
        outcome = item.get("outcome") or {}
        finished += len([a for a in (outcome.get("actions") or []) if a == "done"])
    lines = ["Subgoals completed so far: %d" % finished]
    if history:
        lines.append("Recent rounds:")
        for item in history[-RECENT:]:
            outcome = item.get("outcome") or {}
            actions = outcome.get("actions") or []
            lines.append("- %s: %d actions" % (item.get("decision"), len(actions)))
    return "\n".join(lines)

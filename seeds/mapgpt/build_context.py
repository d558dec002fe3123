"""Context harness: the history and map part of the planner's step message.

`history` is a list of rounds {"round", "decision", "outcome", "observation"},
one per step, the start first: the option taken at the step before (None at
the start), {"place", "step"} (where the agent stands now, decisions so far)
and {"neighbours": [{"place", "description"}]} (the places reachable from
there). Places are numbered in order of first sight.
"""


def build_context(history):
    taken = [item["decision"] for item in history if item["decision"] is not None]
    steps = ", ".join("step %d: %s" % (k, text) for k, text in enumerate(taken))
    trajectory, connections, described, here = [], {}, {}, []
    for item in history:
        place = item["outcome"]["place"]
        here = item["observation"]["neighbours"]
        if not trajectory or trajectory[-1] != place:
            trajectory.append(place)
        if place not in connections:
            connections[place] = [n["place"] for n in here]
        for neighbour in here:
            described[neighbour["place"]] = neighbour["description"]
    lines = ["History: " + (steps or "The navigation has just begun, with no history."),
             "Trajectory: Place " + " ".join(str(p) for p in trajectory), "Map:"]
    for place in connections:
        lines.append("Place %d is connected with Places %s" % (place, ", ".join(str(p) for p in connections[place])))
    adjacent = [n["place"] for n in here]
    unvisited = ["Place %d: %s" % (place, described[place]) for place in sorted(described)
                 if place not in trajectory and place not in adjacent]
    lines.append("Supplementary Info:")
    lines.append("\n".join(unvisited) or "Nothing yet.")
    return "\n".join(lines)

"""Testing the decision before it is acted on, and acting on it (backtracking included)."""

from __future__ import annotations

from executors.mp3d.own_graph import shortest_route
from harness.canvas.registry import Node, node_type

DECISION = {"type": "Decision", "doc": "{kind: move|stop|backtrack, viewpoint | target, ranked, thought, ...}"}


@node_type(
    "smartway.DecisionTest",
    inputs={"decision": DECISION, "waypoints": "List[Waypoint]", "history": "NavHistory", "state": "NavState"},
    outputs={"decision": {"type": "Decision", "doc": "the decision, possibly replaced (then `tested` says why)"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "min_stop_moves": {"type": "integer", "minimum": 0, "maximum": 15, "default": 0,
                           "description": "a stop before this many moves is replaced by the best unvisited waypoint"},
        "block_revisits": {"type": "boolean", "default": False,
                           "description": "a move (not a backtrack) to a visited place is replaced by the best "
                                          "unvisited waypoint, if there is one"},
        "max_backtracks": {"type": "integer", "minimum": 0, "maximum": 15, "default": 3,
                           "description": "backtracks allowed per episode; more are replaced"}}},
    role="gating",
    doc="Tests the fused decision before it is acted on: a move must go to a waypoint, a backtrack to a "
        "visited place within the allowance, a stop must not come too early; a failing decision becomes a "
        "move to the best unvisited waypoint.",
)
class DecisionTest(Node):
    """The replacement for a failing decision is a move to the best-ranked unvisited
    waypoint (`ranked` order, else waypoint order). Checks, in order: a move to a
    viewpoint that is not a waypoint fails ('not a waypoint'; with no unvisited
    waypoint it becomes a stop); a stop before `min_stop_moves` moves fails ('early
    stop'); a backtrack whose target is not a visited place other than the current one,
    or beyond `max_backtracks` backtracks so far, fails ('backtrack'); with
    `block_revisits`, a move to a visited place fails ('revisit'). When no unvisited
    waypoint exists, a failing stop, backtrack or revisit passes unchanged. A replaced
    decision keeps its thought and gets `tested: <reason>`; others pass unchanged. With
    the defaults only invalid moves and backtracks beyond three are replaced."""

    def step(self, inputs, ctx):
        decision, cfg = inputs["decision"], self.config
        history, waypoints = inputs["history"], inputs["waypoints"]
        visited = set(history["trajectory"])
        listed = [w["viewpoint"] for w in waypoints]
        order = [vp for vp in (decision.get("ranked") or []) if vp in listed] + listed
        fresh = next((vp for vp in order if vp not in visited), None)
        kind = decision["kind"]
        reason = None
        if kind == "move" and decision.get("viewpoint") not in listed:
            reason = "not a waypoint"
            if fresh is None:
                return {"decision": dict(decision, kind="stop", tested=reason)}
        elif kind == "stop" and inputs["state"]["moves"] < cfg["min_stop_moves"]:
            reason = "early stop"
        elif kind == "backtrack" and (decision.get("target") not in visited
                                      or decision.get("target") == history["current"]
                                      or history["backtracks"] >= cfg["max_backtracks"]):
            reason = "backtrack"
        elif kind == "move" and cfg["block_revisits"] and decision["viewpoint"] in visited:
            reason = "revisit"
        if reason is None or fresh is None:
            return {"decision": decision}
        ctx.log(tested=reason, replaced=kind, by=fresh)
        replaced = {k: v for k, v in decision.items() if k != "target"}
        return {"decision": dict(replaced, kind="move", viewpoint=fresh, tested=reason)}


@node_type(
    "smartway.Backtrack",
    inputs={"decision": "Decision", "history": "NavHistory"},
    outputs={"actions": {"type": "ActionChunk", "doc": "['stop'], [waypoint], or the route back, place by place"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "max_hops": {"type": "integer", "minimum": 1, "maximum": 15, "default": 6,
                     "description": "most moves of one backtrack (a longer route stops short of its target)"}}},
    role="backtracking",
    doc="Acts on the tested decision: stop, move to the waypoint, or backtrack to a visited place along the "
        "shortest route over the agent's own graph (every hop a move).",
)
class Backtrack(Node):
    """'stop' gives ['stop']; a move gives [the waypoint]; a backtrack gives the places of
    the shortest route (Euclidean lengths) from the current place to its target over the
    edges recorded at visited places, without the current place, at most `max_hops` of
    them (each is a step of the episode's budget). A backtrack target with no route on
    the agent's graph gives ['stop']."""

    def step(self, inputs, ctx):
        decision, history = inputs["decision"], inputs["history"]
        if decision["kind"] == "stop":
            return {"actions": ["stop"]}
        if decision["kind"] == "move":
            return {"actions": [decision["viewpoint"]]}
        route = shortest_route(history["edges"], history["positions"], history["current"], decision["target"])
        if route is None or len(route) < 2:
            ctx.log(no_route=decision["target"])
            return {"actions": ["stop"]}
        return {"actions": route[1:1 + self.config["max_hops"]]}

"""Nodes that sit between the planner's reply and the action: voting over
several replies, and a gate on the chosen option."""

from __future__ import annotations

from collections import Counter

from executors.mapgpt.nodes.parser import parse_reply
from harness.canvas.registry import Node, node_type


@node_type(
    "mapgpt.MajorityVote",
    inputs={"reply": {"type": "Text", "doc": "a planner reply (Thought / New Planning / Action)"},
            "reply_b": {"type": "Text", "required": False, "doc": "a second planner's reply"},
            "reply_c": {"type": "Text", "required": False, "doc": "a third planner's reply"},
            "options": "List[Option]"},
    outputs={"choice": {"type": "Choice", "doc": "{option, valid, votes}"},
             "planning": {"type": "Text", "doc": "the plan of the first reply that voted for the winner"}},
    config_schema={"type": "object", "properties": {}, "additionalProperties": False},
    role="parser",
    doc="Parses every reply that arrived like ActionParser (invalid -> first option) and takes the option "
        "most replies chose; ties go to the earliest reply's choice.",
)
class MajorityVote(Node):
    """Parses every reply that arrived this tick on `reply`, `reply_b` and `reply_c` (the
    optional ports count only when they delivered a value) exactly like
    `mapgpt.ActionParser`: the last 'Action: <letter>'; a missing or unknown letter counts
    as a vote for the first option (stop when stopping is offered, else the first place).
    The option with the most votes wins; on a tie, the winner is the choice of the earliest
    reply (in port order reply, reply_b, reply_c) among the tied options. `choice` is
    `{option, valid, votes}`, where `valid` is that earliest reply's own validity and
    `votes` maps letter -> count; `planning` is that reply's 'New Planning' text ('No plans
    currently.' when it has none). With a single reply it behaves like ActionParser.
    Empty `options` raises (a node error). It has no config."""

    def step(self, inputs, ctx):
        parsed = [parse_reply(inputs[port], inputs["options"]) for port in ("reply", "reply_b", "reply_c")
                  if port in inputs]
        votes = Counter(option["letter"] for option, _, _ in parsed)
        best = max(votes.values())
        option, valid, plan = next(p for p in parsed if votes[p[0]["letter"]] == best)
        ctx.log(votes=dict(votes), option=option["letter"])
        return {"choice": {"option": option, "valid": valid, "votes": dict(votes)}, "planning": plan}


@node_type(
    "mapgpt.ActionGate",
    inputs={"choice": "Choice", "options": "List[Option]", "map": "NavMap", "state": "NavState"},
    outputs={"choice": {"type": "Choice", "doc": "the choice, possibly replaced (then `gated` says why)"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "min_stop_step": {"type": "integer", "minimum": 0, "maximum": 15, "default": 0,
                          "description": "a stop before this step is replaced by the first unvisited place"},
        "block_revisits": {"type": "boolean", "default": False,
                           "description": "a move to a visited place is replaced by the first unvisited place, "
                                          "if there is one"}}},
    role="gating",
    doc="Checks the chosen option before it is acted on: an early stop or (optionally) a move back to a "
        "visited place becomes a move to the first unvisited option; otherwise the choice passes unchanged.",
)
class ActionGate(Node):
    """Checks the chosen option against the map before it is acted on. The fresh options are
    the move options whose viewpoint is not in the map's trajectory (in option order). A
    stop chosen while the simulator's decision count is below `min_stop_step` is replaced
    by the first fresh option (reason 'early stop'); with `block_revisits`, a move to a
    viewpoint already in the trajectory is replaced by the first fresh option (reason
    'revisit'). A replaced choice keeps its other fields and gets `gated: <reason>`. When
    no fresh option exists the choice passes unchanged, even an early stop or a revisit.
    With the defaults (`min_stop_step` 0, `block_revisits` false) every choice passes
    unchanged."""

    def step(self, inputs, ctx):
        choice, cfg = inputs["choice"], self.config
        option = choice["option"]
        visited = set(inputs["map"]["trajectory"])
        fresh = [o for o in inputs["options"] if o["kind"] == "move" and o["viewpoint"] not in visited]
        reason = None
        if option["kind"] == "stop" and inputs["state"]["decisions"] < cfg["min_stop_step"]:
            reason = "early stop"
        elif option["kind"] == "move" and cfg["block_revisits"] and option["viewpoint"] in visited:
            reason = "revisit"
        if reason is None or not fresh:
            return {"choice": choice}
        ctx.log(gated=reason, replaced=option["letter"], by=fresh[0]["letter"])
        return {"choice": dict(choice, option=fresh[0], gated=reason)}

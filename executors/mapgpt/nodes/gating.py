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

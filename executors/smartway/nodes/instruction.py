"""Instruction comprehension (once per episode): action decomposition and landmark
extraction, the first stage of SmartWay's navigator (from Open-Nav)."""

from __future__ import annotations

import re

from executors.mp3d.instructions import landmarks, segments
from executors.mp3d.prompting import PROMPTED_SCHEMA, Prompted
from harness.canvas.registry import Node, node_type

ACTIONS = (("turn left", ("left",)), ("turn right", ("right",)), ("turn around", ("around",)),
           ("go up", ("upstairs", "up")), ("go down", ("downstairs", "down")),
           ("go straight", ("straight", "forward", "ahead")), ("enter", ("enter", "into", "inside")),
           ("exit", ("exit", "leave", "out")), ("stop", ("stop", "wait")))
PORTS = dict(
    inputs={"instruction": "Text"},
    outputs={"plan": {"type": "InstructionPlan",
                      "doc": "{instruction, sub_instructions: [{index, text, action, landmarks}], landmarks}"}},
)


def action_of(text: str) -> str:
    """The first action phrase a sub-instruction's words name ('go straight' when none)."""
    for word in re.findall(r"[a-z]+", text.lower()):
        for action, cues in ACTIONS:
            if word in cues:
                return action
    return "go straight"


def keyword_plan(instruction: str) -> dict:
    subs = [{"index": i, "text": part, "action": action_of(part), "landmarks": landmarks(part)}
            for i, part in enumerate(segments(instruction))]
    return {"instruction": instruction, "sub_instructions": subs,
            "landmarks": list(dict.fromkeys(w for s in subs for w in s["landmarks"]))}


@node_type("smartway.KeywordDecompose", **PORTS, role="decomposition",
           config_schema={"type": "object", "properties": {}, "additionalProperties": False},
           doc="Model-free instruction comprehension: sub-instructions at punctuation, 'then' and 'and'; each "
               "one's action from its direction words and its landmark words.")
class KeywordDecompose(Node):
    """Splits the instruction into sub-instructions at '.', ',', ';', '!', 'then' and
    'and' (lowercased; the whole instruction when nothing is left). Each gets an action,
    the first of its words that names one: left -> 'turn left', right -> 'turn right',
    around -> 'turn around', up/upstairs -> 'go up', down/downstairs -> 'go down',
    straight/forward/ahead -> 'go straight', enter/into/inside -> 'enter',
    exit/leave/out -> 'exit', stop/wait -> 'stop' ('go straight' when none), and its
    landmark words (3+ letters, not stop words, a plural 's' dropped). The plan is made
    once per episode, on the first tick, and emitted every tick. It has no config."""

    def reset(self, ctx):
        self.plan = None

    def step(self, inputs, ctx):
        if self.plan is None:
            self.plan = keyword_plan(inputs["instruction"])
        return {"plan": self.plan}


@node_type("smartway.LLMDecompose", **PORTS, role="decomposition", uses_model=True,
           config_schema=PROMPTED_SCHEMA,
           doc="Asks the pinned model once per episode to decompose the instruction into actions and "
               "landmarks (Open-Nav's instruction comprehension).")
class LLMDecompose(Prompted, Node):
    """On the first tick it renders `user_template` with {{instruction}} and reads a JSON
    object {"sub_instructions": [{"text", "action", "landmarks": [..]}]}; each entry
    needs a non-empty action (text defaults to the action, landmarks to none, lowercased).
    A reply without such a list, or with an empty one, falls back to
    `smartway.KeywordDecompose`'s plan (logged as `fallback`). The plan is emitted every
    tick; the model is called once per episode. A graph without a pinned
    model_profile, or a missing prompt file, is a node error."""

    def reset(self, ctx):
        self.plan = None

    def step(self, inputs, ctx):
        if self.plan is None:
            value, _ = self.ask(ctx, {"instruction": inputs["instruction"]})
            subs = []
            for entry in (value or {}).get("sub_instructions") or []:
                if isinstance(entry, dict) and str(entry.get("action") or "").strip():
                    marks = [str(m).lower() for m in entry.get("landmarks") or [] if str(m).strip()]
                    subs.append({"index": len(subs), "text": str(entry.get("text") or entry["action"]),
                                 "action": str(entry["action"]).lower(), "landmarks": marks})
            if subs:
                self.plan = {"instruction": inputs["instruction"], "sub_instructions": subs,
                             "landmarks": list(dict.fromkeys(w for s in subs for w in s["landmarks"]))}
            else:
                ctx.log(fallback="keyword decomposition")
                self.plan = keyword_plan(inputs["instruction"])
        return {"plan": self.plan}

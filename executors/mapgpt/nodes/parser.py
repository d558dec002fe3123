"""`mapgpt.ActionParser`: the planner's reply -> the chosen option and its new plan."""

from __future__ import annotations

import re

from harness.canvas.registry import Node, node_type

NO_PLANS = "No plans currently."
_ACTION = re.compile(r"Action\W{0,3}\s*([A-Z])\b")
_PLANNING = re.compile(r"New Planning\W{0,3}\s*(.*?)\s*(?:\n\W*Action\W|\Z)", re.S)


def parse_reply(text: str, options: list[dict]) -> tuple[dict, bool, str]:
    """(option, valid, plan). The last 'Action: <letter>' names the option; a
    missing or unknown letter falls back to the first option (stop once stopping
    is offered, the first place before that)."""
    letters = {o["letter"]: o for o in options}
    found = _ACTION.findall(text or "")
    letter = found[-1] if found else None
    valid = letter in letters
    option = letters[letter] if valid else options[0]
    plan_match = _PLANNING.search(text or "")
    plan = plan_match.group(1).strip() if plan_match and plan_match.group(1).strip() else NO_PLANS
    return option, valid, plan


@node_type(
    "mapgpt.ActionParser",
    inputs={"reply": {"type": "Text", "doc": "the planner's reply: Thought / New Planning / Action: <letter>"},
            "options": "List[Option]"},
    outputs={"choice": {"type": "Choice", "doc": "{option, valid}"},
             "planning": {"type": "Text", "doc": "the reply's 'New Planning' section"}},
    config_schema={"type": "object", "properties": {}, "additionalProperties": False},
    role="parser",
    doc="Takes the last 'Action: <letter>' of the reply; an invalid or missing letter selects the first "
        "option (stop when stopping is offered, else the first place). 'New Planning' becomes the plan.",
)
class ActionParser(Node):
    """Reads the planner's reply. The option is the last match of 'Action' followed by up to
    three non-word characters, spaces and a single capital letter (case-sensitive:
    'Action: B' and '**Action:** B' match, 'action: B' and 'Action: Place 3' do not). A
    missing reply, no match or a letter that is not among the options selects the first
    option with `valid: false` - that is stop when stopping is offered, else the first
    place. `planning` is the text after 'New Planning' up to the next line starting with
    'Action' (or the end); no such section, or an empty one at the end of the reply, gives
    'No plans currently.'. An empty 'New Planning:' line directly followed by the Action
    line yields that Action line as the plan. No retry or re-ask is made. Empty `options`
    raises (a node error). It has no config."""

    def step(self, inputs, ctx):
        option, valid, plan = parse_reply(inputs["reply"], inputs["options"])
        ctx.log(option=option["letter"], valid=valid)
        return {"choice": {"option": option, "valid": valid}, "planning": plan}

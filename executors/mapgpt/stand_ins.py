"""The MapGPT planner's STAND-IN: a deterministic rule (not a model) answering the
`mapgpt` seed's step messages on a loopback OpenAI/Anthropic-compatible server. Tests,
the recorded smoke cassette and `architect loop shaper mapgpt --scripted-models` use it
offline (the executor's `stand_in_planner`)."""

from __future__ import annotations

import re

from harness.models.loopback import text_of

PLANNER_MODEL = "scripted-mapgpt-planner"


def scripted_mapgpt_planner(api: str, system, messages: list, body: dict) -> str:
    """Answers a MapGPT step message. Step 0: no Action line (the parser falls
    back to the first place). Then the unvisited option whose description shares
    most words with the instruction. From step 4 it stops: with 'Action: A' when
    the instruction has an even number of words, else with an unknown letter
    (the parser's fallback is the stop option)."""
    prompt = text_of(messages[-1]["content"])
    instruction = re.search(r"^Instruction: (.*)$", prompt, re.M).group(1)
    step = int(re.search(r"Action options \(step (\d+)\)", prompt).group(1))
    visited = set(re.search(r"^Trajectory: Place ([\d ]*)$", prompt, re.M).group(1).split())
    options = re.findall(r"^([A-Z])\. (stop|\S+ \S+ to Place (\d+)(?: — (.*))?)$", prompt, re.M)
    if step == 0:
        return "Thought: I will look around first.\nNew Planning: Start walking."
    if step >= 4 and options and options[0][1] == "stop":
        letter = "A" if len(instruction.split()) % 2 == 0 else "Z"
        return f"Thought: I think I have arrived.\nNew Planning: Stop here.\nAction: {letter}"
    wanted = set(re.findall(r"[a-z]+", instruction.lower()))

    def score(option):
        letter, text, place, description = option
        overlap = len(wanted & set(re.findall(r"[a-z]+", (description or "").lower())))
        return (place not in visited, overlap, -ord(letter))

    moves = [o for o in options if o[1] != "stop"]
    best = max(moves, key=score)
    return (f"Thought: Place {best[2]} matches the instruction best.\n"
            f"New Planning: Go to Place {best[2]} and keep following the instruction.\nAction: {best[0]}")

"""Helpers for the mapgpt tests: the 4-scan fixture, the full-data check, and a
scripted (deterministic, not a model) MapGPT planner for a loopback server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness import PROJECT_ROOT

FIXTURE = PROJECT_ROOT / "tests" / "fixtures" / "mp3d"
SEEDS = PROJECT_ROOT / "seeds"
CASSETTE = PROJECT_ROOT / "tests" / "cassettes" / "mapgpt_smoke.jsonl"
EXPECTED = PROJECT_ROOT / "tests" / "cassettes" / "mapgpt_smoke.expected.json"
SCRIPTED_MODEL = "scripted-mapgpt-planner"
CASSETTE_NOTE = "scripted deterministic MapGPT planner (tests/executors/mapgpt_testkit.py) on a loopback server; no real LLM"


def full_data_dir() -> Path | None:
    """The user's imported R2R copy when it is complete, else None."""
    from executors.mp3d import data_r2r as data

    root = data.r2r_dir()
    return root if data.complete(root) else None


needs_full_data = pytest.mark.skipif(
    full_data_dir() is None,
    reason="needs the full R2R data in the data folder: run `architect data fetch r2r` "
           "(CI imports ../shared/data/r2r with `architect data fetch r2r --from ../shared/data/r2r`)")


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def scripted_mapgpt_planner(api: str, system, messages: list, body: dict) -> str:
    """Answers a MapGPT step message. Step 0: no Action line (the parser falls
    back to the first place). Then the unvisited option whose description shares
    most words with the instruction. From step 4 it stops: with 'Action: A' when
    the instruction has an even number of words, else with an unknown letter
    (the parser's fallback is the stop option)."""
    prompt = _text(messages[-1]["content"])
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

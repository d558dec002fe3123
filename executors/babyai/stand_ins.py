"""Stand-in for the babyai-llm seed's planner model: a deterministic scripted
BabyAI planner answering planner prompts on a loopback server.

It is not a model. It stands in for an LLM when the seed runs offline
(`architect loop shaper --scripted-models` uses it through the spec's
`stand_in_planner`), when test cassettes are recorded and in benchmarks. It reads `Mission: ...` and `Subgoals completed so far: N` from the
prompt (the format of seeds/babyai-llm's templates and context harness), splits
the mission with the BabyAI grammar and names the next unfinished part.
"""

from __future__ import annotations

import re

from executors.babyai.mission import MissionParseError, split_mission
from harness.models.loopback import LoopbackServer

MODEL_NAME = "scripted-babyai-planner"


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def scripted_planner(api: str, system, messages: list, body: dict) -> str:
    prompt = _text(messages[-1]["content"])
    mission = re.search(r"^Mission:\s*(.+)$", prompt, re.M)
    finished = re.search(r"Subgoals completed so far:\s*(\d+)", prompt)
    if mission is None:
        return "I cannot find the mission."
    try:
        parts = split_mission(mission.group(1))
    except MissionParseError:
        return "I do not understand the mission."
    index = int(finished.group(1)) if finished else 0
    return parts[min(index, len(parts) - 1)]


def planner_server(delay_s: float = 0.0) -> LoopbackServer:
    """A (not yet started) loopback server answering with the scripted planner."""
    return LoopbackServer(scripted_planner, delay_s=delay_s, reply_model=MODEL_NAME)

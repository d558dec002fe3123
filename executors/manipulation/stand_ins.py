"""Deterministic stand-ins that answer the model-driven manipulation seeds' prompts
on a loopback OpenAI/Anthropic-compatible server. They are not models; tests and
benchmarks use them to run those seeds offline.

- `voxposer`: reads the `LMP:` and `Query:` lines of the prompt and replies with
  the program the `voxposer-scripted` seed's table holds for that query (a
  comment when it has none, so the LMP then does nothing useful);
- `vla-llm`: reads the `Instruction:` and `Scene:` lines and replies with the
  scripted planner's next subgoal (`subgoals.next_subgoal`)."""

from __future__ import annotations

import json
import re

from executors.manipulation import subgoals
from harness import SEEDS_DIR
from harness.models.loopback import LoopbackServer

LMP_MODEL = "scripted-voxposer-lmps"
PLANNER_MODEL = "scripted-subgoal-planner"
PROGRAMS = SEEDS_DIR / "voxposer-scripted" / "programs"


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def _tables() -> dict[str, dict]:
    return {path.stem: json.loads(path.read_text()) for path in sorted(PROGRAMS.glob("*.json"))}


def scripted_lmp_answer(api: str, system, messages: list, body: dict) -> str:
    prompt = _text(messages[-1]["content"])
    kind = re.search(r"^LMP:\s*(\w+)", prompt, re.M)
    queries = re.findall(r"^Query:\s*(.+)$", prompt, re.M)
    program = _tables().get(kind.group(1) if kind else "", {}).get(queries[-1].strip() if queries else "")
    if program is None:
        return "```python\n# no program for this query\n```"
    lines = program if isinstance(program, list) else program.splitlines()
    return "```python\n" + "\n".join(lines) + "\n```"


def lmp_server(delay_s: float = 0.0) -> LoopbackServer:
    """A (not yet started) loopback server answering LMP prompts with the scripted programs."""
    return LoopbackServer(scripted_lmp_answer, delay_s=delay_s, reply_model=LMP_MODEL)


def scripted_planner_answer(api: str, system, messages: list, body: dict) -> str:
    prompt = _text(messages[-1]["content"])
    instruction = re.search(r"^Instruction:\s*(.+)$", prompt, re.M)
    scene = re.search(r"^Scene:\s*(\{.*\})\s*$", prompt, re.M)
    if instruction is None or scene is None:
        return "I cannot find the instruction and the scene."
    state = json.loads(scene.group(1))
    objects = {name: {"position": position} for name, position in state["objects"].items()}
    try:
        return subgoals.next_subgoal(instruction.group(1).strip(), objects, state["gripper"])
    except subgoals.SubgoalError as exc:
        return f"I have no plan: {exc}"


def planner_server(delay_s: float = 0.0) -> LoopbackServer:
    """A (not yet started) loopback server answering planner prompts with the scripted planner."""
    return LoopbackServer(scripted_planner_answer, delay_s=delay_s, reply_model=PLANNER_MODEL)

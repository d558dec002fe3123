"""Deterministic stand-ins answering the LIBERO seeds' prompts on a loopback
OpenAI/Anthropic-compatible server. They are not models; tests, benchmarks and
`architect loop shaper vla-libero-llm --scripted-models` use them offline.

- `voxposer-libero`: reads the prompt's `LMP:` and last `Query:` lines and
  replies with the program the `voxposer-libero-scripted` seed's table holds for
  that query, the template's values assigned first (a comment when the table has
  none, so the LMP then does nothing useful);
- `vla-libero-llm` (`scripted_planner`): ignores the images, reads the
  `Instruction:` line and replies with it rephrased into the command forms the π0
  stand-in understands (`pick up the X and place it on/in the Y`, `put the X
  on/in the Y`) when a few fixed rules can, else with the instruction as given."""

from __future__ import annotations

import re

from executors.libero.nodes.voxposer import lookup, program_table
from harness import SEEDS_DIR
from harness.models.loopback import LoopbackServer, text_of

LMP_MODEL = "scripted-voxposer-libero-lmps"
PLANNER_MODEL = "scripted-libero-command-planner"
_REPHRASE = ((r"^(?:pick|lift|grab|grasp|take)(?: up)? (?:the )?", "pick up the "),
             (r" and (?:set|put|place|drop|lay) it (?:on top of|onto|on) (?:the )?", " and place it on the "),
             (r" and (?:set|put|place|drop|lay) it (?:into|inside|in) (?:the )?", " and place it in the "),
             (r"^(?:place|set) (?:the )?", "put the "))
PROGRAMS = SEEDS_DIR / "voxposer-libero-scripted" / "programs"


def scripted_lmp_answer(api: str, system, messages: list, body: dict) -> str:
    prompt = text_of(messages[-1]["content"])
    kind = re.search(r"^LMP:\s*(\w+)", prompt, re.M)
    queries = re.findall(r"^Query:\s*(.+)$", prompt, re.M)
    path = PROGRAMS / f"{kind.group(1) if kind else ''}.json"
    found = lookup(program_table(path.read_text(), str(path)), queries[-1].strip()) \
        if path.is_file() and queries else None
    if found is None:
        return "```python\n# no program for this query\n```"
    program, values = found
    assignments = "".join(f"{name} = {value!r}\n" for name, value in values.items())
    return "```python\n" + assignments + program + "```"


def lmp_server(delay_s: float = 0.0) -> LoopbackServer:
    """A (not yet started) loopback server answering LMP prompts with the scripted programs."""
    return LoopbackServer(scripted_lmp_answer, delay_s=delay_s, reply_model=LMP_MODEL)


def rephrase(instruction: str) -> str:
    command = instruction.strip().lower().rstrip(".")
    for pattern, replacement in _REPHRASE:
        command = re.sub(pattern, replacement, command, count=1)
    return command


def scripted_planner(api: str, system, messages: list, body: dict) -> str:
    instruction = re.search(r"^Instruction:\s*(.+)$", text_of(messages[-1]["content"]), re.M)
    return rephrase(instruction.group(1)) if instruction else "I cannot find the instruction."


def planner_server(delay_s: float = 0.0) -> LoopbackServer:
    """A (not yet started) loopback server answering `vla-libero-llm` planner prompts."""
    return LoopbackServer(scripted_planner, delay_s=delay_s, reply_model=PLANNER_MODEL)

"""A deterministic stand-in that answers the `voxposer` seed's LMP prompts on a
loopback OpenAI/Anthropic-compatible server. It is not a model: it reads the
`LMP:` and `Query:` lines of the prompt and replies with the program the
`voxposer-scripted` seed's table holds for that query (a comment when it has
none, so the LMP then fails like a model that wrote nothing useful). Used by
tests and benchmarks to run the model-driven chain offline."""

from __future__ import annotations

import json
import re
from pathlib import Path

from harness.models.loopback_server import LoopbackServer

MODEL_NAME = "scripted-voxposer-lmps"
PROGRAMS = Path(__file__).resolve().parent / "seeds" / "voxposer-scripted" / "programs"


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
    return LoopbackServer(scripted_lmp_answer, delay_s=delay_s, reply_model=MODEL_NAME)

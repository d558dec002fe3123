"""A deterministic stand-in answering the `voxposer-libero` seed's LMP prompts on a
loopback OpenAI/Anthropic-compatible server. It is not a model: it reads the
prompt's `LMP:` and last `Query:` lines and replies with the program the
`voxposer-libero-scripted` seed's table holds for that query, the template's
values assigned first (a comment when the table has none, so the LMP then does
nothing useful). Tests and benchmarks use it to run that seed offline."""

from __future__ import annotations

import re

from executors.libero.nodes.voxposer import lookup, program_table
from harness import SEEDS_DIR
from harness.models.loopback import LoopbackServer, text_of

LMP_MODEL = "scripted-voxposer-libero-lmps"
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

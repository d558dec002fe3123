"""Running a language-model program (LMP) of the VoxPoser chain.

An LMP's program is Python written by a model (or, in the scripted seed, taken
from a fixed table). It runs under the restricted-execution core's rules for
simple code (`harness.sandbox.restricted`, as a context harness does):
RestrictedPython bytecode, no imports, no `_` names, no eval/exec/open/getattr,
no classes or while loops, an iteration budget and a deadline. Its own
allowances: the namespace holds only the functions the LMP is given (the
sub-LMPs it may dispatch to, `execute`, scene queries) and the numpy-like
helpers of `voxels.numpy_helpers`, and it may write into numpy arrays (value
maps). A value-map LMP returns its map by assigning `ret_val`.
"""

from __future__ import annotations

import re

import numpy as np

from harness.sandbox.restricted import SIMPLE_CODE_NAMES, SIMPLE_CODE_NODES, IterationBudget, RestrictedError, Rules

MAX_ITERATIONS = 2_000_000
MAX_SECONDS = 5.0
# The config keys of a node whose model writes the programs: its candidate prompt files.
PROGRAM_PROMPT_CONFIG = {
    "prompt": {"type": "string",
               "description": "candidate file: the user message template ({{query}}, {{objects}}, {{kind}})"},
    "system_prompt": {"type": "string", "description": "candidate file with the system prompt"},
}
_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)


class LMPError(RestrictedError):
    """An LMP program was rejected or failed while running."""


RULES = Rules(kind="an LMP program", error=LMPError, doc="executors/manipulation/README.md",
              writable=(dict, list, np.ndarray), forbidden_nodes=SIMPLE_CODE_NODES,
              forbidden_names=SIMPLE_CODE_NAMES, denied_builtins=SIMPLE_CODE_NAMES)


def extract_code(reply: str) -> str:
    """The program in a model reply: the first fenced block, else the whole reply."""
    match = _FENCE.search(reply)
    return (match.group(1) if match else reply).strip() + "\n"


def model_program(node_id: str, ctx, config: dict, read, values: dict) -> tuple[str, str]:
    """(program, request id): one model call on the rendered `prompt` template (and the
    optional `system_prompt`), `read(key)` giving a config key's candidate file text."""
    from harness.models.prompts import render

    if ctx.model is None:
        raise RuntimeError(f"node {node_id!r} calls a model but the graph pins no model_profile")
    user = render(read("prompt"), values, where=config["prompt"])
    system = render(read("system_prompt"), values, where=config["system_prompt"]) \
        if config.get("system_prompt") else None
    response = ctx.model.complete([{"role": "user", "content": user}], system=system)
    return extract_code(response.text), response.request_id


def program_problems(source: str, where: str) -> list[str]:
    return RULES.problems(source, where)[1]


def program_budget() -> IterationBudget:
    """The iteration budget and deadline of one program run (`paused()` stops its clock)."""
    return IterationBudget(MAX_ITERATIONS, MAX_SECONDS, LMPError, "LMP program")


def run_program(source: str, functions: dict, where: str, budget: IterationBudget | None = None):
    """Execute `source` with only `functions` (and safe builtins) in scope; return `ret_val`.
    Exceptions that are not `Exception`s (a cancelled program's) pass through unchanged."""
    problems = program_problems(source, where)
    if problems:
        raise LMPError("LMP program rejected: " + "; ".join(problems))
    code = RULES.compile(source, where)
    budget = budget or program_budget()
    env = {**RULES.globals_for("lmp", getiter=budget.iterate), **functions}
    try:
        exec(code, env)  # noqa: S102 - restricted bytecode in a namespace of chosen functions
    except LMPError:
        raise
    except RecursionError:
        raise LMPError(f"{where}: recursed too deeply") from None
    except Exception as exc:
        raise LMPError(f"{where}: {type(exc).__name__}: {exc}") from exc
    return env.get("ret_val")

"""Running a language-model program (LMP) of the VoxPoser chain.

An LMP's program is Python written by a model (or, in the scripted seed, taken
from a fixed table). It runs in a restricted namespace built on the context
harness's rules (`harness.models.context_harness`): RestrictedPython bytecode,
no imports, no `_` names, no eval/exec/open/getattr, no classes or while loops,
an iteration budget and a deadline. The namespace holds only the functions the
LMP is given (the sub-LMPs it may dispatch to, `execute`, scene queries) and
the numpy-like helpers of `voxels.numpy_helpers`. A value-map LMP returns its
map by assigning `ret_val`.
"""

from __future__ import annotations

import contextlib
import re
import time

import numpy as np
from RestrictedPython import compile_restricted_exec
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence, safer_getattr

from harness.models.context_harness import _extra_builtins, _inplace, restricted_problems
from harness.pysource import serialised

MAX_ITERATIONS = 2_000_000
MAX_SECONDS = 5.0
_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)


class LMPError(Exception):
    """An LMP program was rejected or failed while running."""


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
    return restricted_problems(source, where, "an LMP program")[1]


class Budget:
    """The iteration budget and deadline of one program run. `paused()` stops its clock
    (a program suspended while the robot executes a motion is not running)."""

    def __init__(self):
        self.count = 0
        self.deadline = time.monotonic() + MAX_SECONDS

    @contextlib.contextmanager
    def paused(self):
        start = time.monotonic()
        try:
            yield
        finally:
            self.deadline += time.monotonic() - start

    def iterate(self, obj):
        for item in obj:
            self.count += 1
            if self.count > MAX_ITERATIONS:
                raise LMPError(f"LMP program iterated more than {MAX_ITERATIONS} times")
            if self.count % 4096 == 0 and time.monotonic() > self.deadline:
                raise LMPError(f"LMP program ran longer than {MAX_SECONDS} s")
            yield item


def _write_guard(obj):
    # the program's own containers and value maps only
    if isinstance(obj, (dict, list, np.ndarray)):
        return obj
    raise LMPError(f"writing to a {type(obj).__name__} is not allowed in an LMP program")


def run_program(source: str, functions: dict, where: str, budget: Budget | None = None):
    """Execute `source` with only `functions` (and safe builtins) in scope; return `ret_val`.
    Exceptions that are not `Exception`s (a cancelled program's) pass through unchanged."""
    problems = program_problems(source, where)
    if problems:
        raise LMPError("LMP program rejected: " + "; ".join(problems))
    code = serialised(compile_restricted_exec, source, filename=where).code
    budget = budget or Budget()
    env = {"__builtins__": _extra_builtins(), "__name__": "lmp", "_getattr_": safer_getattr,
           "_getitem_": lambda obj, key: obj[key], "_getiter_": budget.iterate,
           "_iter_unpack_sequence_": guarded_iter_unpack_sequence, "_unpack_sequence_": guarded_unpack_sequence,
           "_write_": _write_guard, "_inplacevar_": _inplace, **functions}
    try:
        exec(code, env)  # noqa: S102 - restricted bytecode in a namespace of chosen functions
    except LMPError:
        raise
    except RecursionError:
        raise LMPError(f"{where}: recursed too deeply") from None
    except Exception as exc:
        raise LMPError(f"{where}: {type(exc).__name__}: {exc}") from exc
    return env.get("ret_val")

"""Load and run a candidate's *context harness* (`build_context(history) -> str`) safely.

The file is evolved by an optimizer, so it is treated as hostile:
- compile time: the restricted-execution core's rules for simple code
  (`harness.sandbox.restricted.RULES` below: no imports, no `_`/dunder names or
  attributes, no class/global/nonlocal/while, no eval/exec/open/getattr-style
  builtins, none of the refused constructs); it must define `build_context`
  taking one argument;
- run time and check time alike: the code runs only in a separate sandbox
  process (`SandboxedHarness`) whose address space (RLIMIT_AS) and CPU time
  (RLIMIT_CPU) are capped before the candidate's module runs at all, and which
  the caller kills when a call overruns its wall-clock budget (a fresh process
  serves the next call). Inside, restricted builtins, an iteration budget, a
  cap on the returned text and a fresh module per call (no state carried from
  one call to the next). Anything the harness raises — SystemExit,
  KeyboardInterrupt and GeneratorExit included — is the candidate's failure
  (ContextHarnessError), never the caller's;
- check time (`check_context_harness`) runs the sandbox on probe histories
  generated from the executor's declared history format (empty, long, odd values).

The sandbox process is the shared one (`harness.sandbox.process`, the same
core candidate node types run in); this module's `serve` is its program, and
of the harness it imports only the sandbox package, so the sandbox starts fast.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import os
import threading
import time
from pathlib import Path

from harness.sandbox.process import Channel, SandboxDied, SandboxError, SandboxProcess, SandboxTimeout, apply_limits
from harness.sandbox.restricted import SIMPLE_CODE_NAMES, SIMPLE_CODE_NODES, IterationBudget, RestrictedError, Rules

FUNCTION = "build_context"
MAX_ITERATIONS = 1_000_000
MAX_SECONDS = 2.0                      # wall-clock and CPU budget of one call
MAX_OUTPUT_CHARS = 20_000
MEMORY_BYTES = 512 * 1024 * 1024       # address space of the sandbox process
START_SECONDS = 20.0                   # allowance for the sandbox's interpreter to start
MAX_REPLY_BYTES = 1 << 20


class ContextHarnessError(RestrictedError):
    """The context harness is rejected (check time) or failed while running."""


# the core's rules (harness.sandbox.restricted) for the stricter kind of code: one function, no imports
RULES = Rules(kind="a context harness", error=ContextHarnessError, doc="docs/writing-nodes.md, The context harness",
              writable=(dict, list), forbidden_nodes=SIMPLE_CODE_NODES, forbidden_names=SIMPLE_CODE_NAMES,
              denied_builtins=SIMPLE_CODE_NAMES)


def static_problems(source: str, filename: str = "build_context.py") -> list[str]:
    """Every reason the source is rejected before running it (empty list: accepted)."""
    tree, problems = RULES.problems(source, filename)
    if tree is None:
        return problems
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == FUNCTION]
    if not functions:
        problems.append(f"{filename}: must define a top-level function {FUNCTION}(history)")
    else:
        args = functions[0].args
        positional = args.posonlyargs + args.args
        required = len(positional) - len(args.defaults)
        if (required > 1) or (not positional and args.vararg is None):
            problems.append(f"{filename}:{functions[0].lineno}: {FUNCTION} must take exactly one argument (history)")
    for node in tree.body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if not (docstring or isinstance(node, (ast.FunctionDef, ast.Assign, ast.AnnAssign))):
            problems.append(f"{filename}:{node.lineno}: only functions, constants and docstrings "
                            "may appear at the top level")
    def line_of(problem: str) -> int:
        head = problem.split(":")[1] if problem.count(":") > 1 else ""
        return int(head) if head.isdigit() else 0
    return sorted(set(problems), key=lambda p: (line_of(p), p))


class ContextHarness:
    """A restricted `build_context`, run in THIS process: the sandbox process's
    engine. Callers outside the sandbox use `SandboxedHarness`, which also caps
    time and memory for any code."""

    def __init__(self, source: str, filename: str = "build_context.py", *,
                 max_iterations: int = MAX_ITERATIONS, max_seconds: float = MAX_SECONDS):
        problems = static_problems(source, filename)
        if problems:
            raise ContextHarnessError("context harness rejected: " + "; ".join(problems))
        self.filename = filename
        self._budget = IterationBudget(max_iterations, max_seconds, ContextHarnessError, FUNCTION)
        self._code = RULES.compile(source, filename)
        self._budget.start()
        self._load()  # the top level must run (under the caller's limits) before the first call

    def _load(self):
        env = {**RULES.globals_for("context_harness", getiter=self._budget.iterate),
               "json": _SafeJson, "math": _SafeMath}
        try:
            exec(self._code, env)  # noqa: S102 - restricted bytecode in restricted globals
        except ContextHarnessError:
            raise
        except BaseException as exc:  # noqa: BLE001 - SystemExit & co. from the candidate are its failure
            raise ContextHarnessError(f"{self.filename}: top level failed: {type(exc).__name__}: {exc}") from None
        return env[FUNCTION]

    def __call__(self, history) -> str:
        history = json.loads(json.dumps(history, default=str))
        self._budget.start()
        try:
            out = self._load()(history)  # a fresh module per call: no state crosses calls
        except ContextHarnessError:
            raise
        except RecursionError:
            raise ContextHarnessError(f"{self.filename}: {FUNCTION} recursed too deeply") from None
        except MemoryError:
            raise
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, GeneratorExit included
            raise ContextHarnessError(f"{self.filename}: {FUNCTION} raised {type(exc).__name__}: "
                                      f"{str(exc)[:300]}") from None
        if time.monotonic() > self._budget.deadline:
            raise ContextHarnessError(f"{FUNCTION} ran longer than {self._budget.max_seconds} s")
        if not isinstance(out, str):
            raise ContextHarnessError(f"{self.filename}: {FUNCTION} must return a str, got {type(out).__name__}")
        if len(out) > MAX_OUTPUT_CHARS:
            raise ContextHarnessError(f"{self.filename}: {FUNCTION} returned {len(out)} characters "
                                      f"(limit {MAX_OUTPUT_CHARS})")
        return out


class _SafeJson:
    """`json.dumps` / `json.loads` only."""
    dumps = staticmethod(lambda obj, **kw: json.dumps(obj, **{k: v for k, v in kw.items()
                                                                if k in ("indent", "sort_keys", "separators")}))
    loads = staticmethod(json.loads)


class _SafeMath:
    """The `math` module's public functions and constants (read-only copies)."""


for _name in dir(math):
    if not _name.startswith("_"):
        setattr(_SafeMath, _name, getattr(math, _name))


# -- the sandbox process -------------------------------------------------------

class SandboxedHarness:
    """A context harness that runs only in its own sandbox process (`harness.sandbox.process`).

    The process caps its address space and CPU time before the candidate's
    module is executed, serves one call per request frame, and is killed by the
    caller when a call overruns `max_seconds` of wall-clock time; the next call
    starts a fresh one. Thread-safe (calls are serialised); `close()` ends it."""

    def __init__(self, source: str, filename: str = "build_context.py", *, max_seconds: float = MAX_SECONDS,
                 memory_bytes: int = MEMORY_BYTES):
        problems = static_problems(source, filename)
        if problems:
            raise ContextHarnessError("context harness rejected: " + "; ".join(problems))
        self.filename, self.max_seconds, self.memory_bytes = filename, max_seconds, memory_bytes
        self._source = source
        self._process = SandboxProcess("harness.models.context_harness:serve", (str(memory_bytes), str(max_seconds)),
                                       max_reply_bytes=MAX_REPLY_BYTES, on_start=self._load)

    @property
    def starts(self) -> int:
        """How many sandbox processes this harness started."""
        return self._process.generation

    def __call__(self, history) -> str:
        # what the harness sees is the history as JSON (values JSON cannot hold as their text)
        message = {"history": json.dumps(history, default=str)}
        try:
            reply = self._process.request(message, self.max_seconds + 0.5)
        except SandboxError as exc:
            raise self._error(exc, "ran longer than") from None
        if not reply.get("ok"):
            raise ContextHarnessError(str(reply.get("error") or "the harness failed"))
        if not isinstance(reply.get("context"), str):
            raise ContextHarnessError(f"{self.filename}: the sandbox sent a reply without a context")
        return reply["context"]

    def close(self) -> None:
        self._process.close()

    # -- internals ---------------------------------------------------------
    def _load(self, process: SandboxProcess) -> None:
        """A fresh process's first request: the source, whose top level runs there under the limits."""
        try:
            reply = process._exchange({"source": self._source, "filename": self.filename},  # noqa: SLF001
                                      START_SECONDS + self.max_seconds, None)
        except SandboxError as exc:
            raise self._error(exc, "did not load within") from None
        if not reply.get("ok"):
            process.close()
            raise ContextHarnessError(str(reply.get("error") or f"{self.filename}: failed to load"))

    def _error(self, exc: SandboxError, overrun: str) -> ContextHarnessError:
        if isinstance(exc, SandboxTimeout):
            return ContextHarnessError(f"{self.filename}: {FUNCTION} {overrun} {self.max_seconds} s "
                                       "(the sandbox process was killed)")
        if isinstance(exc, SandboxDied):
            return ContextHarnessError(f"{self.filename}: {exc} (CPU {self.max_seconds} s, memory "
                                       f"{self.memory_bytes >> 20} MB)")
        return ContextHarnessError(f"{self.filename}: {exc}")


_SHARED: dict[tuple[str, str], SandboxedHarness] = {}
_SHARED_LOCK = threading.Lock()


def shared_harness(source: str, filename: str = "build_context.py") -> SandboxedHarness:
    """The one sandbox this process uses for this harness source (every call
    gets a fresh module, so runners and episodes may share it)."""
    key = (filename, hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest())
    with _SHARED_LOCK:
        harness = _SHARED.get(key)
        if harness is None:
            harness = _SHARED[key] = SandboxedHarness(source, filename)
        return harness


def load_context_harness(path: str | os.PathLike) -> SandboxedHarness:
    path = Path(path)
    if not path.is_file():
        raise ContextHarnessError(f"context harness not found: {path}")
    return SandboxedHarness(path.read_text(encoding="utf-8", errors="replace"), filename=path.name)


def check_context_harness(path: str | os.PathLike, histories: list[tuple[str, list]] | None = None) -> list[str]:
    """Static rules, then every probe history `(label, history)` in a sandbox. Returns the problems."""
    path = Path(path)
    if not path.is_file():
        return [f"context harness not found: {path}"]
    try:
        source = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        return [f"{path.name}: not UTF-8 text (binary content at byte {exc.start})"]
    problems = static_problems(source, path.name)
    if problems:
        return problems
    harness = SandboxedHarness(source, filename=path.name)
    try:
        for label, history in histories if histories is not None else [("an empty history", [])]:
            try:
                harness(history)
            except ContextHarnessError as exc:
                return [f"{exc} (probe: {label})"]
    except ContextHarnessError as exc:  # pragma: no cover - raised by the load itself
        return [str(exc)]
    finally:
        harness.close()
    return []


def serve(memory_bytes: str, max_seconds: str) -> int:
    """The sandbox process's program: limits first, then the candidate's module, then one call per request."""
    memory, seconds = int(memory_bytes), float(max_seconds)
    allow_cpu = apply_limits(memory)
    channel = Channel()

    def failure(exc: BaseException) -> dict:
        if isinstance(exc, ContextHarnessError):
            return {"ok": False, "error": str(exc)[:2000]}
        if isinstance(exc, MemoryError):
            return {"ok": False, "restart": True, "error": f"{FUNCTION} ran out of memory (limit {memory >> 20} MB)"}
        return {"ok": False, "error": f"{FUNCTION} failed: {type(exc).__name__}: {str(exc)[:300]}"}

    request = channel.receive() or {}
    allow_cpu(seconds + 1.0)
    try:
        harness = ContextHarness(request["source"], request.get("filename", "build_context.py"), max_seconds=seconds)
    except BaseException as exc:  # noqa: BLE001 - whatever the top level does, report it and stop
        channel.send(failure(exc))
        return 1
    channel.send({"ok": True})
    while (request := channel.receive()) is not None:
        try:
            history = json.loads(request["history"])
            allow_cpu(seconds + 1.0)
            channel.send({"ok": True, "context": harness(history)})
        except MemoryError as exc:
            channel.send(failure(exc))
            return 1  # a fresh process serves the next call
        except BaseException as exc:  # noqa: BLE001 - the candidate's failure, reported to the caller
            channel.send(failure(exc))
    return 0

"""Load a candidate's *context harness* (`build_context(history) -> str`) safely.

The file is evolved by an optimizer, so it is treated as hostile:
- compile time: RestrictedPython (no imports, no `_`/dunder names or attributes)
  plus our own AST rules (no class/global/nonlocal/while, no eval/exec/open/
  getattr-style builtins); it must define `build_context` taking one argument;
- check time (`check_context_harness`): the function also runs on probe
  histories in a separate process under CPU, memory and wall-clock limits;
- run time: restricted builtins, an iteration budget and a deadline enforced
  by the iterator guard, a cap on the returned text, and a JSON copy of the
  history so it cannot alter graph state.

This file is also a script (`python context_harness.py FILE`) used for the probe;
it imports nothing from the harness package so the probe starts fast.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from RestrictedPython import compile_restricted, compile_restricted_exec, safe_builtins
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence, safer_getattr

FUNCTION = "build_context"
FORBIDDEN_NAMES = {"eval", "exec", "open", "compile", "getattr", "setattr", "delattr", "globals", "locals",
                   "vars", "input", "breakpoint", "help", "memoryview", "type", "super", "object", "dir",
                   "__import__", "exit", "quit", "pow"}
FORBIDDEN_NODES = {ast.ClassDef: "class definitions", ast.Global: "global", ast.Nonlocal: "nonlocal",
                   ast.While: "while loops", ast.Import: "imports", ast.ImportFrom: "imports",
                   ast.AsyncFunctionDef: "async functions", ast.Await: "await", ast.Yield: "generators",
                   ast.YieldFrom: "generators"}
MAX_ITERATIONS = 1_000_000
MAX_SECONDS = 2.0
MAX_OUTPUT_CHARS = 20_000
PROBE_MEMORY_BYTES = 512 * 1024 * 1024
PROBE_HISTORIES = [
    [],
    [{"round": 1, "subgoal": "go to the red ball", "result": "reached", "steps": 5, "error": None,
      "observation": "a red ball ahead"}],
    [{"round": i, "subgoal": f"explore {i}", "result": "failed" if i % 2 else "ok", "steps": i,
      "error": "blocked" if i % 3 == 0 else None, "observation": "wall ahead " * 3} for i in range(1, 31)],
]


class ContextHarnessError(Exception):
    """The context harness is rejected (check time) or failed while running."""


def _extra_builtins() -> dict:
    allowed = {name: value for name, value in safe_builtins.items()
               if name not in FORBIDDEN_NAMES and not name.startswith("_")}
    allowed.update({"list": list, "tuple": tuple, "dict": dict, "set": set, "frozenset": frozenset,
                    "sorted": sorted, "enumerate": enumerate, "zip": zip, "min": min, "max": max, "sum": sum,
                    "any": any, "all": all, "reversed": reversed, "map": map, "filter": filter})
    return allowed


def static_problems(source: str, filename: str = "build_context.py") -> list[str]:
    """Every reason the source is rejected before running it (empty list: accepted)."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        return [f"{filename}:{exc.lineno}: syntax error: {exc.msg}"]
    problems = []
    for node in ast.walk(tree):
        for kind, what in FORBIDDEN_NODES.items():
            if isinstance(node, kind):
                problems.append(f"{filename}:{node.lineno}: {what} are not allowed in a context harness")
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            problems.append(f"{filename}:{node.lineno}: {node.id!r} is not allowed in a context harness")
    result = compile_restricted_exec(source, filename=filename)
    problems.extend(f"{filename}: {message}" for message in result.errors)
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


class _Budget:
    def __init__(self, max_iterations: int, max_seconds: float):
        self.max_iterations = max_iterations
        self.max_seconds = max_seconds
        self.count = 0
        self.deadline = 0.0

    def start(self) -> None:
        self.count = 0
        self.deadline = time.monotonic() + self.max_seconds

    def iterate(self, obj):
        for item in obj:
            self.count += 1
            if self.count > self.max_iterations:
                raise ContextHarnessError(f"{FUNCTION} iterated more than {self.max_iterations} times")
            if self.count % 4096 == 0 and time.monotonic() > self.deadline:
                raise ContextHarnessError(f"{FUNCTION} ran longer than {self.max_seconds} s")
            yield item


class ContextHarness:
    """A loaded, restricted `build_context`. Call it with the history."""

    def __init__(self, source: str, filename: str = "build_context.py", *,
                 max_iterations: int = MAX_ITERATIONS, max_seconds: float = MAX_SECONDS):
        problems = static_problems(source, filename)
        if problems:
            raise ContextHarnessError("context harness rejected: " + "; ".join(problems))
        self.filename = filename
        self._budget = _Budget(max_iterations, max_seconds)
        code = compile_restricted(source, filename=filename, mode="exec")
        env = {
            "__builtins__": _extra_builtins(),
            "__name__": "context_harness",
            "_getattr_": safer_getattr,
            "_getitem_": lambda obj, key: obj[key],
            "_getiter_": self._budget.iterate,
            "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
            "_unpack_sequence_": guarded_unpack_sequence,
            "_write_": _write_guard,
            "_inplacevar_": _inplace,
            "json": _SafeJson, "math": __import__("math"),
        }
        try:
            exec(code, env)  # noqa: S102 - restricted bytecode in restricted globals
        except Exception as exc:
            raise ContextHarnessError(f"{filename}: top level failed: {type(exc).__name__}: {exc}") from None
        self._function = env[FUNCTION]

    def __call__(self, history) -> str:
        history = json.loads(json.dumps(history, default=str))
        self._budget.start()
        try:
            out = self._function(history)
        except ContextHarnessError:
            raise
        except RecursionError:
            raise ContextHarnessError(f"{self.filename}: {FUNCTION} recursed too deeply") from None
        except Exception as exc:
            raise ContextHarnessError(f"{self.filename}: {FUNCTION} raised {type(exc).__name__}: {exc}") from None
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


def _write_guard(obj):
    # Only the function's own containers may be written to (item assignment);
    # attribute writes could reach shared objects such as `math`.
    if isinstance(obj, (dict, list)):
        return obj
    raise ContextHarnessError(f"writing to a {type(obj).__name__} is not allowed in a context harness")


def _inplace(op: str, x, y):
    ops = {"+=": lambda: x + y, "-=": lambda: x - y, "*=": lambda: x * y, "/=": lambda: x / y,
           "//=": lambda: x // y, "%=": lambda: x % y, "|=": lambda: x | y, "&=": lambda: x & y}
    if op not in ops:
        raise ContextHarnessError(f"operator {op} is not allowed")
    return ops[op]()


def load_context_harness(path: str | os.PathLike) -> ContextHarness:
    path = Path(path)
    if not path.is_file():
        raise ContextHarnessError(f"context harness not found: {path}")
    return ContextHarness(path.read_text(encoding="utf-8"), filename=path.name)


def check_context_harness(path: str | os.PathLike, *, timeout_s: float = 20.0) -> list[str]:
    """Static rules, then the probe histories in a limited subprocess. Returns the problems."""
    path = Path(path)
    if not path.is_file():
        return [f"context harness not found: {path}"]
    problems = static_problems(path.read_text(encoding="utf-8"), path.name)
    if problems:
        return problems
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), str(path)], capture_output=True,
                              text=True, timeout=timeout_s, env={"PATH": os.environ.get("PATH", "")})
    except subprocess.TimeoutExpired:
        return [f"{path.name}: probe run exceeded {timeout_s} s wall time"]
    if proc.returncode != 0:
        detail = (proc.stdout.strip() or proc.stderr.strip().splitlines()[-1:] or ["killed"])
        detail = detail if isinstance(detail, str) else detail[0]
        if proc.returncode < 0:
            detail = f"killed by signal {-proc.returncode} (CPU or memory limit)"
        return [f"{path.name}: probe run failed: {detail}"]
    return []


def _probe_main(path: str) -> int:
    import resource

    harness = load_context_harness(path)
    cpu = int(MAX_SECONDS * len(PROBE_HISTORIES)) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_AS, (PROBE_MEMORY_BYTES, PROBE_MEMORY_BYTES))
    for history in PROBE_HISTORIES:
        try:
            harness(history)
        except MemoryError:
            print(f"{FUNCTION} ran out of memory on a history of {len(history)} round(s)")
            return 1
        except ContextHarnessError as exc:
            print(f"{exc} (on a history of {len(history)} round(s))")
            return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(_probe_main(sys.argv[1]))
    except ContextHarnessError as exc:
        print(exc)
        sys.exit(1)

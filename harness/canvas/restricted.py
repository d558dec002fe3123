"""Candidate-authored node code (`nodeset/*.py`): its allowances on top of the
restricted-execution core (`harness.sandbox.restricted`).

A candidate may define node types in Python, but the only way data may reach
that code is through the node's declared input ports (and its state grants).
The code runs in a sandbox process of its own (`harness.canvas.isolated`),
and inside it under the core's rules plus these allowances:

- imports only from `node_modules()`: the node API, a few pure
  standard-library modules, numpy, and the helper modules each executor
  declares in its spec (`ExecutorSpec.sandbox_modules`: the names they define
  themselves, not the modules and functions they import);
- a single-underscore attribute (`self._cache`) only on the candidate's own
  classes; the node context (`ctx`) offers only `CONTEXT_API`, `ctx.model`
  only `complete`, paths their pure operations anywhere and reading only
  inside the candidate folder;
- builtins without `eval`/`exec`/`open`/`compile`/`globals`/`vars`/`dir`/`type`.

A candidate method raising SystemExit, KeyboardInterrupt or GeneratorExit
raises `CandidateCodeError` instead: the candidate's failure, not the
harness's. The allowlist is documented in docs/writing-nodes.md.
"""

from __future__ import annotations

import functools
import os
import threading
import types
from pathlib import Path, PurePath

from RestrictedPython import limited_builtins

from harness.sandbox.restricted import RestrictedError, Rules

CANDIDATE_MODULE_PREFIX = "_architect_candidate_"
TRUSTED_ENV = "ARCHITECT_TRUSTED_NODESETS"
DOC = "docs/writing-nodes.md, Restrictions"

# module -> the names a candidate may use from it (None: every public name); executors add their own
BASE_MODULES: dict[str, frozenset[str] | None] = {
    # the node API
    "harness.canvas": frozenset({"Node", "node_type"}),
    "harness.canvas.registry": frozenset({"Node", "node_type"}),
    "harness.canvas.node": frozenset({"Node", "node_type"}),
    # pure standard library
    "math": None, "cmath": None, "random": None, "re": None, "json": None, "collections": None,
    "itertools": None, "heapq": None, "bisect": None, "statistics": None, "enum": None, "textwrap": None,
    "__future__": None,
    # not singledispatch (nor typing): they evaluate annotation strings with plain eval(); not wraps:
    # it copies attributes between objects
    "functools": frozenset({"reduce", "partial", "lru_cache", "cache", "cmp_to_key", "total_ordering"}),
    # numpy without file I/O, memory maps or raw pointers (harness.sandbox.restricted.NUMPY_DENIED)
    "numpy": None, "numpy.linalg": None, "numpy.random": None,
}
# what candidate code may use of its node context
CONTEXT_API = frozenset({"node_id", "tick", "episode", "rng", "read", "write", "log", "model", "self_log",
                         "candidate_dir"})
# paths: pure operations anywhere; reading only inside the candidate folder (ctx.candidate_dir); no writing
PATH_PURE = frozenset({"name", "stem", "suffix", "suffixes", "parent", "parents", "parts", "joinpath", "with_name",
                       "with_suffix", "with_stem", "relative_to", "is_relative_to", "as_posix", "match"})
PATH_READ = frozenset({"read_text", "read_bytes", "exists", "is_file", "is_dir", "iterdir", "glob", "rglob"})
MODEL_API = frozenset({"complete"})


class CandidateCodeError(RestrictedError):
    """Candidate node code broke a restriction, or raised SystemExit/KeyboardInterrupt/GeneratorExit."""


def node_modules() -> dict[str, frozenset[str] | None]:
    """The modules candidate node code may import: `BASE_MODULES` plus every executor's `sandbox_modules`
    (of those, only what the module defines itself: not the modules and functions it imports)."""
    from harness.executor_api import discover_executors

    out = dict(BASE_MODULES)
    for spec in discover_executors().values():
        out.update({module: own_public_names(module) for module in spec.sandbox_modules})
    return out


def own_public_names(module_name: str) -> frozenset[str]:
    """The public names a module defines itself (a helper's `np`, `deque` or `lazy_import` are not its own)."""
    import importlib

    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return frozenset()
    return frozenset(name for name, value in vars(module).items()
                     if not name.startswith("_") and not isinstance(value, types.ModuleType)
                     and getattr(value, "__module__", module_name) == module_name)


_readable_roots: set[Path] = set()
_rules: Rules | None = None
_rules_lock = threading.Lock()


def node_rules() -> Rules:
    """The rules of candidate node code in this process (built once)."""
    global _rules
    with _rules_lock:
        if _rules is None:
            import numpy as np

            from harness.canvas.context import AccountedModel, Context

            rules = Rules(kind="candidate node code", error=CandidateCodeError, doc=DOC, modules=node_modules(),
                          owned_prefix=CANDIDATE_MODULE_PREFIX, writable=(dict, list, set, bytearray, np.ndarray),
                          allow_private_names=True, per_object=PATH_READ | {"candidate_dir"},
                          extra_builtins={**limited_builtins, "__build_class__": __build_class__, "iter": iter, "next": next, "super": super,
                                    "format": format, "bytes": bytes, "staticmethod": staticmethod,
                                    "classmethod": classmethod, "property": property})
            rules.object_rules = ((Context, functools.partial(_context_rule, rules)),
                                  (PurePath, functools.partial(_path_rule, rules)),
                                  (AccountedModel, functools.partial(_model_rule, rules)))
            _rules = rules
        return _rules


def _context_rule(rules: Rules, ctx, name: str) -> None:
    if name not in CONTEXT_API:
        rules.deny(f"use ctx.{name} (the context offers {', '.join(sorted(CONTEXT_API))})")
    if name == "candidate_dir" and ctx.candidate_dir is not None:
        _readable_roots.add(Path(ctx.candidate_dir).resolve())


def _path_rule(rules: Rules, path, name: str) -> None:
    if name in PATH_READ:
        if not any(Path(path).resolve().is_relative_to(root) for root in _readable_roots):
            rules.deny(f"read {str(path)[:200]!r}: only files inside the candidate folder may be read")
    elif name not in PATH_PURE:
        rules.deny(f"use Path.{name} (paths offer {', '.join(sorted(PATH_PURE | PATH_READ))})")


def _model_rule(rules: Rules, model, name: str) -> None:
    if name not in MODEL_API:
        rules.deny(f"use ctx.model.{name}")


def compile_candidate(source: str, filename: str):
    """Restricted bytecode of a nodeset file; a SyntaxError (line of the first) listing every violation."""
    return node_rules().checked(source, filename)


def trusted() -> bool:
    """`ARCHITECT_TRUSTED_NODESETS=1` runs nodeset files as plain Python: only for
    the harness's own tests of failure handling (hanging or dying workers need
    `time` and `os`). A search must never set it."""
    return os.environ.get(TRUSTED_ENV) == "1"


def exec_candidate_module(source: str, filename: str, module: types.ModuleType) -> None:
    """Run a nodeset file's restricted code as `module`."""
    if trusted():
        exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102 - see trusted()
        return
    code = compile_candidate(source, filename)
    module.__dict__.update(node_rules().globals_for(module.__name__))
    try:
        exec(code, module.__dict__)  # noqa: S102 - restricted bytecode in restricted globals
    except (SystemExit, KeyboardInterrupt, GeneratorExit) as exc:
        raise CandidateCodeError(f"the module raised {type(exc).__name__}: {exc}") from None


def contain(cls: type) -> None:
    """Make SystemExit, KeyboardInterrupt and GeneratorExit raised by a candidate
    class's own methods the candidate's failure (CandidateCodeError). The runtime
    calls them positionally: setup(), reset(ctx), step(inputs, ctx), close()."""
    for name, wrap in _WRAPPERS.items():
        owner = next((klass for klass in cls.__mro__ if name in klass.__dict__), None)
        if owner is None or not node_rules().owned(owner) or getattr(owner.__dict__[name], "_contained", False):
            continue  # the harness's own default (Node.step & co.), or already contained
        original = owner.__dict__[name]
        method = original if isinstance(original, types.FunctionType) else _bound_by_descriptor(original)
        contained = functools.wraps(method)(wrap(method, f"{cls.__qualname__}.{name}"))
        contained._contained = True
        setattr(cls, name, contained)


def _bound_by_descriptor(original):
    """A plain function calling whatever a class attribute is (staticmethod, partial, callable object)."""
    def call(self, *args):
        target = original.__get__(self, type(self)) if hasattr(type(original), "__get__") else original
        return target(*args)
    return call


_ESCAPES = (SystemExit, KeyboardInterrupt, GeneratorExit)


def _failure(what: str, exc: BaseException) -> CandidateCodeError:
    return CandidateCodeError(f"{what} raised {type(exc).__name__}: {exc}")


def _wrap0(method, what):
    def call(self):
        try:
            return method(self)
        except _ESCAPES as exc:
            raise _failure(what, exc) from None
    return call


def _wrap1(method, what):
    def call(self, ctx):
        try:
            return method(self, ctx)
        except _ESCAPES as exc:
            raise _failure(what, exc) from None
    return call


def _wrap2(method, what):
    def call(self, inputs, ctx):
        try:
            return method(self, inputs, ctx)
        except _ESCAPES as exc:
            raise _failure(what, exc) from None
    return call


_WRAPPERS = {"setup": _wrap0, "close": _wrap0, "reset": _wrap1, "step": _wrap2}

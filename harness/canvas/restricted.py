"""Candidate-authored node code (`nodeset/*.py`) runs restricted.

A candidate may define node types in Python, but the only way data may reach
that code is through the node's declared input ports (and its state grants):
it must not reach the simulator, the runner or other candidates by walking
objects. So the file is compiled with RestrictedPython and executed in a
module whose globals route every attribute access, attribute write, import
and call with `*args` through the guards below:

- imports only from `ALLOWED_MODULES` (the node API, a few pure
  standard-library modules and numpy) and the helper modules executors
  declare for candidates (`ExecutorSpec.sandbox_modules`);
- no names or attributes starting with `__`, no frame/generator/traceback
  internals; a single-underscore attribute (`self._cache`) only on objects of
  the candidate's own classes;
- the node context (`ctx`) offers only its public API (`CONTEXT_API`), numpy
  no file I/O or raw memory, str no `format` (which reads attributes itself);
- no writes to modules, harness objects or module-level containers of the
  allowed modules;
- builtins without `eval`/`exec`/`open`/`compile`/`globals`/`vars`/`dir`/`type`.

A candidate method raising SystemExit, KeyboardInterrupt or GeneratorExit
raises `CandidateCodeError` instead: the candidate's failure, not the
harness's. The allowlist is documented in docs/writing-nodes.md.
"""

from __future__ import annotations

import functools
import operator
import os
import re
import types
import warnings
from pathlib import Path, PurePath
from typing import Any

from RestrictedPython import PrintCollector, compile_restricted, limited_builtins, safe_builtins
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence
from RestrictedPython.transformer import INSPECT_ATTRIBUTES, RestrictingNodeTransformer

from harness.canvas.context import AccountedModel, Context
from harness.pysource import serialised

CANDIDATE_MODULE_PREFIX = "_architect_candidate_"
TRUSTED_ENV = "ARCHITECT_TRUSTED_NODESETS"

# module -> the names a candidate may use from it (None: every public name)
ALLOWED_MODULES: dict[str, frozenset[str] | None] = {
    # the node API
    "harness.canvas": frozenset({"Node", "node_type"}),
    "harness.canvas.registry": frozenset({"Node", "node_type"}),
    "harness.canvas.node": frozenset({"Node", "node_type"}),
    # pure standard library
    "math": None, "cmath": None, "random": None, "re": None, "json": None, "collections": None,
    "itertools": None, "heapq": None, "bisect": None, "statistics": None, "enum": None, "textwrap": None,
    "__future__": None,
    # not singledispatch (nor typing): they evaluate annotation strings with plain eval()
    "functools": frozenset({"reduce", "partial", "lru_cache", "cache", "cmp_to_key", "total_ordering", "wraps"}),
    # numpy without file I/O, memory maps or raw pointers (see NUMPY_DENIED)
    "numpy": None, "numpy.linalg": None, "numpy.random": None,
}
NUMPY_DENIED = frozenset({
    "ctypeslib", "ctypes", "cffi", "lib", "testing", "f2py", "distutils", "load", "loadtxt", "genfromtxt", "fromfile",
    "fromregex", "save", "savez", "savez_compressed", "savetxt", "memmap", "DataSource", "tofile", "dump", "dumps",
    "frombuffer", "from_dlpack", "__dlpack__", "setbufsize", "seterrcall"})
# what candidate code may use of its node context
CONTEXT_API = frozenset({"node_id", "tick", "episode", "rng", "read", "write", "log", "model", "self_log",
                         "candidate_dir"})
# paths: pure operations anywhere; reading only inside the candidate folder (ctx.candidate_dir); no writing
PATH_PURE = frozenset({"name", "stem", "suffix", "suffixes", "parent", "parents", "parts", "joinpath", "with_name",
                       "with_suffix", "with_stem", "relative_to", "is_relative_to", "as_posix", "match"})
PATH_READ = frozenset({"read_text", "read_bytes", "exists", "is_file", "is_dir", "iterdir", "glob", "rglob"})
MODEL_API = frozenset({"complete"})
_STR_DENIED = frozenset({"format", "format_map"})
_OPAQUE = (types.FrameType, types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType,
           types.TracebackType, types.CodeType)
_DENIED_BUILTINS = {"setattr", "delattr", "_getattr_", "id", "__build_class__"}


class CandidateCodeError(RuntimeError):
    """Candidate node code broke a restriction, or raised SystemExit/KeyboardInterrupt/GeneratorExit."""


class _Policy(RestrictingNodeTransformer):
    """RestrictedPython's rules, except that single-underscore names (`_helper`,
    `self._cache`) are allowed; the attribute guard decides on whose objects."""

    _UNDERSCORE = re.compile(r'"([^"]+)" is an invalid (?:variable|attribute) name because it starts with "_"')

    def error(self, node, info):
        match = self._UNDERSCORE.match(info)
        if match and _private(match.group(1)):
            return
        super().error(node, info)

    def visit_Import(self, node):
        for alias in node.names:
            if not _module_reachable(alias.name):
                self.error(node, f"import of {alias.name!r} is not allowed (allowed modules are listed in "
                                 "docs/writing-nodes.md)")
        return super().visit_Import(node)

    def visit_ImportFrom(self, node):
        module = node.module or ""
        for alias in node.names:
            names = allowed_modules().get(module, ())
            allowed = names is None or alias.name in (names or ()) or f"{module}.{alias.name}" in allowed_modules()
            if node.level or not allowed:
                self.error(node, f"import of {alias.name!r} from {'.' * node.level}{module!r} is not allowed "
                                 "(allowed modules are listed in docs/writing-nodes.md)")
        return super().visit_ImportFrom(node)


@functools.cache
def allowed_modules() -> dict[str, frozenset[str] | None]:
    """`ALLOWED_MODULES` plus every installed executor's `sandbox_modules` (every public name)."""
    from harness.executor_api import discover_executors

    declared = {module: None for spec in discover_executors().values() for module in spec.sandbox_modules}
    return {**declared, **ALLOWED_MODULES}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and not name.endswith("_")


def _deny(what: str):
    raise CandidateCodeError(f"candidate node code may not {what} (see docs/writing-nodes.md, Restrictions)")


def _owned(obj) -> bool:
    cls = obj if isinstance(obj, type) else type(obj)
    return cls.__module__.startswith(CANDIDATE_MODULE_PREFIX)


def _module_allows(module: types.ModuleType, name: str) -> bool:
    allowed = allowed_modules().get(module.__name__, ())
    if allowed is None:
        return not name.startswith("_") and not (module.__name__.startswith("numpy") and name in NUMPY_DENIED)
    return name in allowed


def _module_reachable(name: str) -> bool:
    """An allowed module, or a package on the way to one (for `a.b.c` traversal)."""
    return name in allowed_modules() or any(m.startswith(name + ".") for m in allowed_modules())


def guarded_getattr(obj, name, *default):
    """The `getattr` builtin of candidate code."""
    if not isinstance(name, str):
        raise TypeError("attribute name must be a string")
    try:
        return attribute(obj, name)
    except AttributeError:
        if default:
            return default[0]
        raise


# type (or the module itself) -> attribute names already found allowed: the guard's fast path
_allowed: dict[Any, set[str]] = {}


def attribute(obj, name: str):
    """`obj.name` in candidate code (RestrictedPython's `_getattr_`)."""
    kind = type(obj)
    names = _allowed.get(obj if kind is types.ModuleType else kind)
    if names is not None and name in names:
        return getattr(obj, name)
    value = _checked_getattr(obj, name)
    if name not in _PER_OBJECT:  # these also depend on which object it is
        _allowed.setdefault(obj if kind is types.ModuleType else kind, set()).add(name)
    return value


def _checked_getattr(obj, name: str):
    if name.startswith("__") or name in INSPECT_ATTRIBUTES:
        _deny(f"read the attribute {name!r}")
    if isinstance(obj, types.ModuleType):
        value = getattr(obj, name)
        if isinstance(value, types.ModuleType):
            if not _module_reachable(value.__name__):
                _deny(f"reach the module {value.__name__!r}")
            return value
        if not _module_allows(obj, name):
            _deny(f"use {obj.__name__}.{name}")
        return value
    if name.startswith("_") and not _owned(obj):
        _deny(f"read the private attribute {name!r} of a {type(obj).__name__}")
    if isinstance(obj, _OPAQUE):
        _deny(f"inspect a {type(obj).__name__}")
    if isinstance(obj, Context):
        if name not in CONTEXT_API:
            _deny(f"use ctx.{name} (the context offers {', '.join(sorted(CONTEXT_API))})")
        if name == "candidate_dir" and obj.candidate_dir is not None:
            _readable_roots.add(Path(obj.candidate_dir).resolve())
    elif isinstance(obj, PurePath):
        if name in PATH_READ:
            if not any(Path(obj).resolve().is_relative_to(root) for root in _readable_roots):
                _deny(f"read {str(obj)[:200]!r}: only files inside the candidate folder may be read")
        elif name not in PATH_PURE:
            _deny(f"use Path.{name} (paths offer {', '.join(sorted(PATH_PURE | PATH_READ))})")
    elif isinstance(obj, AccountedModel):
        if name not in MODEL_API:
            _deny(f"use ctx.model.{name}")
    elif isinstance(obj, str) and name in _STR_DENIED:
        _deny(f"use str.{name} (use f-strings or %)")
    elif type(obj).__module__.startswith("numpy") and name in NUMPY_DENIED:
        _deny(f"use numpy's {name}")
    elif id(obj) in _frozen_ids and callable(getattr(obj, name, None)) and name in _MUTATORS:
        _deny("change a container that belongs to an allowed module")
    return getattr(obj, name)


_MUTATORS = frozenset({"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault",
                       "add", "discard", "sort", "reverse", "appendleft", "extendleft", "popleft", "rotate"})
_PER_OBJECT = _MUTATORS | PATH_READ | {"candidate_dir"}
_frozen_ids: set[int] = set()
_readable_roots: set[Path] = set()


def guarded_write(obj):
    """The target of `obj.x = ...`, `obj[k] = ...`, `del obj.x` in candidate code."""
    if id(obj) in _frozen_ids:
        _deny("change a container that belongs to an allowed module")
    if isinstance(obj, (dict, list, set, bytearray)) or _owned(obj):
        return obj
    if type(obj).__module__.startswith("numpy"):
        return obj
    _deny(f"write to a {type(obj).__name__}")


def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level:
        _deny("use relative imports")
    if fromlist:
        for item in fromlist:
            if f"{name}.{item}" not in allowed_modules() and name not in allowed_modules():
                _deny(f"import {item!r} from {name!r}")
    elif not _module_reachable(name):
        _deny(f"import {name!r}")
    module = __import__(name, None, None, fromlist or (), 0)
    for item in fromlist or ():
        value = getattr(module, item, None)
        if isinstance(value, types.ModuleType):
            if value.__name__ not in allowed_modules():
                _deny(f"import the module {value.__name__!r}")
            _freeze(value)
        elif not _module_allows(module, item):
            _deny(f"import {item!r} from {name!r}")
    _freeze(module)
    return module


def _freeze(module: types.ModuleType) -> None:
    """Remember the module-level containers of an allowed module: candidate code may read, not change them."""
    for value in vars(module).values():
        if isinstance(value, (dict, list, set, bytearray)):
            _frozen_ids.add(id(value))


def _inplace(op: str, x, y):
    ops = {"+=": "__iadd__", "-=": "__isub__", "*=": "__imul__", "/=": "__itruediv__", "//=": "__ifloordiv__",
           "%=": "__imod__", "**=": "__ipow__", "|=": "__ior__", "&=": "__iand__", "^=": "__ixor__",
           "<<=": "__ilshift__", ">>=": "__irshift__", "@=": "__imatmul__"}
    if op not in ops:
        _deny(f"use the operator {op}")
    if id(x) in _frozen_ids:
        _deny("change a container that belongs to an allowed module")
    return getattr(operator, ops[op].strip("_"))(x, y)


def _builtins() -> dict[str, Any]:
    out = {k: v for k, v in safe_builtins.items() if k not in _DENIED_BUILTINS}
    out.update(limited_builtins)
    out.update({"__import__": guarded_import, "getattr": guarded_getattr,
                "hasattr": lambda obj, name: _hasattr(obj, name), "__build_class__": __build_class__,
                "list": list, "dict": dict, "set": set, "frozenset": frozenset, "tuple": tuple, "sorted": sorted,
                "enumerate": enumerate, "zip": zip, "min": min, "max": max, "sum": sum, "any": any, "all": all,
                "reversed": reversed, "map": map, "filter": filter, "iter": iter, "next": next,
                "super": super, "format": format, "bytes": bytes, "staticmethod": staticmethod,
                "classmethod": classmethod, "property": property})
    return out


def _hasattr(obj, name) -> bool:
    try:
        guarded_getattr(obj, name)
        return True
    except (AttributeError, CandidateCodeError):
        return False


def restricted_globals(module_name: str) -> dict[str, Any]:
    """Globals of a candidate module: restricted builtins and the guards."""
    return {
        "__builtins__": _builtins(),
        "__name__": module_name,
        "__metaclass__": type,
        "_getattr_": attribute,
        "_getitem_": operator.getitem,
        "_getiter_": iter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": guarded_write,
        "_inplacevar_": _inplace,
        "_apply_": lambda f, *args, **kwargs: f(*args, **kwargs),
        "_print_": PrintCollector,
    }


def compile_candidate(source: str, filename: str):
    """Restricted bytecode of a nodeset file; a SyntaxError (line of the first) listing every violation."""
    try:
        with warnings.catch_warnings():  # RestrictedPython's notes (e.g. on print) are not the user's concern
            warnings.simplefilter("ignore")
            return serialised(compile_restricted, source, filename=filename, mode="exec", policy=_Policy)
    except SyntaxError as exc:
        errors = exc.args[0] if exc.args and isinstance(exc.args[0], tuple) else (exc.msg or str(exc),)
        line = re.match(r"Line (\d+): ", str(errors[0]))
        error = SyntaxError("; ".join(re.sub(r"^Line \d+: ", "", str(e)) for e in errors))
        error.lineno = int(line.group(1)) if line else exc.lineno
        raise error from None


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
    module.__dict__.update(restricted_globals(module.__name__))
    code = compile_candidate(source, filename)
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
        if owner is None or not _owned(owner) or getattr(owner.__dict__[name], "_contained", False):
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

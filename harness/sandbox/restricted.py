"""The restricted-execution core: RestrictedPython plus guards, configured per kind of code.

`Rules(...)` holds what one kind of hostile code may do; the caller adds only
its own allowances (modules it may import, extra attribute rules for the
objects it hands the code, builtins, AST constructs it forbids, an iteration
budget). Common to every kind:

- compile time (`Rules.problems` / `Rules.compile`): RestrictedPython's rules
  (no names or attributes starting with `__`, no frame internals), imports
  only of allowed modules, and refused constructs named in the error:
  `str.format` / `format_map` in any spelling (they read attributes by
  themselves), attribute-copying helpers (`functools.wraps`,
  `update_wrapper`), raw-memory array functions (`as_strided`,
  `stride_tricks`, `frombuffer`, `ctypes`, `ndarray(..., buffer=...)`),
  calling a method through a built-in class (`str.join(s, xs)`, `list.append`);
- run time (`Rules.attribute` & co.): no dunder or inspect attributes, no
  single-underscore attribute except on the code's own objects, no frames,
  generators' or tracebacks' internals, no unbound method taken from a class
  the code does not own (`np.ndarray.tofile`, `dict.update`), numpy without
  file I/O or raw memory, no writes to modules or to containers of allowed
  modules. The guard's cache is keyed by the class itself for classes and
  modules, by the type for instances.
"""

from __future__ import annotations

import ast
import builtins
import operator
import contextlib
import re
import time
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from RestrictedPython import PrintCollector, compile_restricted, safe_builtins
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence
from RestrictedPython.transformer import INSPECT_ATTRIBUTES, RestrictingNodeTransformer

from harness.pysource import serialised


class RestrictedError(RuntimeError):
    """Restricted code broke a rule. Each kind of code raises its own subclass."""


NUMPY_DENIED = frozenset({
    "ctypeslib", "ctypes", "cffi", "lib", "testing", "f2py", "distutils", "load", "loadtxt", "genfromtxt", "fromfile",
    "fromregex", "save", "savez", "savez_compressed", "savetxt", "memmap", "DataSource", "tofile", "dump", "dumps",
    "frombuffer", "from_dlpack", "setbufsize", "seterrcall", "as_strided", "stride_tricks", "byte_bounds",
    "get_include", "show_config", "info", "source", "who", "lookfor"})
# constructs refused wherever they appear, with the reason shown to the author
REFUSED_ATTRIBUTES = {
    "format": "str.format reads attributes by itself: use an f-string or %",
    "format_map": "str.format_map reads attributes by itself: use an f-string or %",
    "wraps": "functools.wraps copies attributes between objects",
    "update_wrapper": "functools.update_wrapper copies attributes between objects",
    "as_strided": "as_strided makes array views over raw memory",
    "stride_tricks": "stride_tricks makes array views over raw memory",
    "frombuffer": "frombuffer reads raw memory",
    "ctypes": "ctypes reaches raw memory",
    "tofile": "tofile writes a file",
    "from_dlpack": "from_dlpack reads raw memory",
    "attrgetter": "operator.attrgetter reads attributes by itself",
    "methodcaller": "operator.methodcaller calls methods by name",
}
RAW_MEMORY_KEYWORDS = frozenset({"buffer", "strides", "offset"})
# built-in classes: a method taken from one of them is called through its class (`str.join(s, parts)`)
BUILTIN_CLASSES = {name: value for name, value in vars(builtins).items()
                   if isinstance(value, type) and not issubclass(value, BaseException)}
_UNBOUND = (types.FunctionType, types.MethodDescriptorType, types.WrapperDescriptorType,
            types.GetSetDescriptorType, types.MemberDescriptorType, property)
_OPAQUE = (types.FrameType, types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType,
           types.TracebackType, types.CodeType)
MUTATORS = frozenset({"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault",
                      "add", "discard", "sort", "reverse", "appendleft", "extendleft", "popleft", "rotate"})
_INPLACE = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
            "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "|=": operator.ior,
            "&=": operator.iand, "^=": operator.ixor, "<<=": operator.ilshift, ">>=": operator.irshift,
            "@=": operator.imatmul}
_BASE_BUILTINS = {"list": list, "dict": dict, "set": set, "frozenset": frozenset, "tuple": tuple, "sorted": sorted,
                  "enumerate": enumerate, "zip": zip, "min": min, "max": max, "sum": sum, "any": any, "all": all,
                  "reversed": reversed, "map": map, "filter": filter}
_ALWAYS_DENIED_BUILTINS = frozenset({"eval", "exec", "compile", "open", "globals", "locals", "vars", "dir", "input",
                                     "breakpoint", "help", "memoryview", "setattr", "delattr", "id", "_getattr_",
                                     "exit", "quit", "type"})
# the stricter kind of code (a context harness, an LMP program): one function or a short script
SIMPLE_CODE_NODES = {ast.ClassDef: "class definitions", ast.Global: "global", ast.Nonlocal: "nonlocal",
                     ast.While: "while loops", ast.Import: "imports", ast.ImportFrom: "imports",
                     ast.AsyncFunctionDef: "async functions", ast.Await: "await", ast.Yield: "generators",
                     ast.YieldFrom: "generators"}
SIMPLE_CODE_NAMES = frozenset({"eval", "exec", "open", "compile", "getattr", "setattr", "delattr", "globals", "locals",
                               "vars", "input", "breakpoint", "help", "memoryview", "type", "super", "object", "dir",
                               "__import__", "exit", "quit", "pow"})
AttributeRule = Callable[[Any, str], None]  # raises the rules' error when `obj.name` is refused


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and not name.endswith("_")


@dataclass
class Rules:
    """What one kind of restricted code may do (see the module docstring for what all kinds share)."""

    kind: str                                     # names the code in messages: "candidate node code"
    error: type[Exception]                        # raised for every refusal
    doc: str                                      # where the author reads the restrictions
    modules: dict[str, frozenset[str] | None] = field(default_factory=dict)  # module -> names (None: public)
    owned_prefix: str | None = None               # module-name prefix of the code's own classes
    object_rules: tuple[tuple[type | tuple, AttributeRule], ...] = ()  # extra checks per type of object
    writable: tuple[type, ...] = (dict, list, set, bytearray)  # containers whose items may be written
    extra_builtins: dict[str, Any] = field(default_factory=dict)   # added to the safe builtins
    denied_builtins: frozenset[str] = frozenset()            # removed besides the always-denied ones
    forbidden_nodes: dict[type, str] = field(default_factory=dict)  # AST node -> what it is, refused
    forbidden_names: frozenset[str] = frozenset()            # names refused wherever they appear
    allow_private_names: bool = False             # `_helper`, `self._cache` (the guard decides on whose objects)
    per_object: frozenset[str] = frozenset()      # attribute names whose verdict depends on the object
    _allowed: dict[Any, set[str]] = field(default_factory=dict, init=False, repr=False)
    _frozen: set[int] = field(default_factory=set, init=False, repr=False)

    # -- compile time --------------------------------------------------------
    def problems(self, source: str, filename: str) -> tuple[ast.Module | None, list[str]]:
        """The parsed module (None on a syntax error) and every reason the source is refused."""
        try:
            tree = serialised(ast.parse, source, filename=filename)
        except SyntaxError as exc:
            return None, [f"{filename}:{exc.lineno}: syntax error: {exc.msg}"]
        problems = [f"{filename}:{line}: {message}" for line, message in self.construct_problems(tree)]
        try:
            self.compile(source, filename)
        except SyntaxError as exc:
            problems.extend(f"{filename}:{line}: {message}"
                            for line, message in getattr(exc, "parts", [(exc.lineno, exc.msg)]))
        return tree, problems

    def construct_problems(self, tree: ast.AST) -> list[tuple[int, str]]:
        out = []
        for node in ast.walk(tree):
            line = getattr(node, "lineno", 0)
            for node_kind, what in self.forbidden_nodes.items():
                if isinstance(node, node_kind):
                    out.append((line, f"{what} are not allowed in {self.kind}"))
            if isinstance(node, ast.Name) and node.id in self.forbidden_names:
                out.append((line, f"{node.id!r} is not allowed in {self.kind}"))
            if isinstance(node, ast.Attribute):
                if node.attr in REFUSED_ATTRIBUTES:
                    out.append((line, f"`.{node.attr}` is not allowed in {self.kind}: {REFUSED_ATTRIBUTES[node.attr]}"))
                elif isinstance(node.value, ast.Name) and node.value.id in BUILTIN_CLASSES \
                        and _unbound_on(BUILTIN_CLASSES[node.value.id], node.attr):
                    out.append((line, f"`{node.value.id}.{node.attr}` calls a method through its class, which "
                                      f"is not allowed in {self.kind}: call it on the value"))
            if isinstance(node, ast.alias) and node.name.split(".")[-1] in REFUSED_ATTRIBUTES:
                name = node.name.split(".")[-1]
                out.append((line, f"importing {name!r} is not allowed in {self.kind}: {REFUSED_ATTRIBUTES[name]}"))
            if isinstance(node, ast.Call) and any(k.arg in RAW_MEMORY_KEYWORDS for k in node.keywords) \
                    and _called_name(node.func) in ("ndarray", "recarray", "memmap", "array", "asarray"):
                out.append((line, f"`{_called_name(node.func)}(..., buffer/strides/offset=...)` builds an array "
                                  f"over raw memory, which is not allowed in {self.kind}"))
        return out

    def compile(self, source: str, filename: str):
        """Restricted bytecode; a SyntaxError (line of the first) listing every violation."""
        policy = _policy(self)
        try:
            with warnings.catch_warnings():  # RestrictedPython's notes (e.g. on print) are not the author's concern
                warnings.simplefilter("ignore")
                return serialised(compile_restricted, source, filename=filename, mode="exec", policy=policy)
        except SyntaxError as exc:
            errors = exc.args[0] if exc.args and isinstance(exc.args[0], tuple) else (exc.msg or str(exc),)
            parts = [(int(m.group(1)) if (m := re.match(r"Line (\d+): ", str(e))) else exc.lineno,
                      re.sub(r"^Line \d+: ", "", str(e))) for e in errors]
            error = SyntaxError("; ".join(message for _, message in parts))
            error.lineno = parts[0][0]
            error.parts = parts  # (line, message) of every violation
            raise error from None

    def checked(self, source: str, filename: str):
        """`compile`, after the refused constructs: a SyntaxError naming the first one's line."""
        tree = serialised(ast.parse, source, filename=filename)
        found = self.construct_problems(tree)
        if found:
            error = SyntaxError("; ".join(message for _, message in found))
            error.lineno = found[0][0]
            raise error
        return self.compile(source, filename)

    # -- run time ------------------------------------------------------------
    def deny(self, what: str):
        raise self.error(f"{self.kind} may not {what} (see {self.doc})")

    def owned(self, obj) -> bool:
        if self.owned_prefix is None:
            return False
        cls = obj if isinstance(obj, type) else type(obj)
        return cls.__module__.startswith(self.owned_prefix)

    def attribute(self, obj, name: str):
        """`obj.name` in restricted code (RestrictedPython's `_getattr_`)."""
        key = obj if isinstance(obj, (type, types.ModuleType)) else type(obj)
        names = self._allowed.get(key)
        if names is not None and name in names:
            return getattr(obj, name)
        value = self._checked_getattr(obj, name)
        if name not in self.per_object and name not in MUTATORS:
            try:
                self._allowed.setdefault(key, set()).add(name)
            except TypeError:  # an unhashable class: no fast path
                pass
        return value

    def _checked_getattr(self, obj, name: str):
        if not isinstance(name, str):
            raise TypeError("attribute name must be a string")
        if name.startswith("__") or name in INSPECT_ATTRIBUTES:
            self.deny(f"read the attribute {name!r}")
        if name in REFUSED_ATTRIBUTES:
            self.deny(f"use .{name} ({REFUSED_ATTRIBUTES[name]})")
        if isinstance(obj, types.ModuleType):
            return self._module_attribute(obj, name)
        if name.startswith("_") and not self.owned(obj):
            self.deny(f"read the private attribute {name!r} of a {type(obj).__name__}")
        if isinstance(obj, _OPAQUE):
            self.deny(f"inspect a {type(obj).__name__}")
        cls = obj if isinstance(obj, type) else type(obj)
        if str(getattr(cls, "__module__", "")).startswith("numpy") and name in NUMPY_DENIED:
            self.deny(f"use numpy's {name}")
        if isinstance(obj, type) and not self.owned(obj) and _unbound_on(obj, name):
            self.deny(f"take {obj.__name__}.{name} from its class (call it on a value)")
        for kinds, rule in self.object_rules:
            if isinstance(obj, kinds):
                rule(obj, name)
                break
        if name in MUTATORS and id(obj) in self._frozen and callable(getattr(obj, name, None)):
            self.deny("change a container that belongs to an allowed module")
        return getattr(obj, name)

    def _module_attribute(self, module: types.ModuleType, name: str):
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            if not self.reachable(value.__name__):
                self.deny(f"reach the module {value.__name__!r}")
            return value
        if not self.module_allows(module, name):
            self.deny(f"use {module.__name__}.{name}")
        return value

    def module_allows(self, module: types.ModuleType, name: str) -> bool:
        allowed = self.modules.get(module.__name__, ())
        if allowed is None:
            return not name.startswith("_") and not (module.__name__.startswith("numpy") and name in NUMPY_DENIED)
        return name in allowed

    def reachable(self, name: str) -> bool:
        """An allowed module, or a package on the way to one (for `a.b.c` traversal)."""
        return name in self.modules or any(m.startswith(name + ".") for m in self.modules)

    def getattr_builtin(self, obj, name, *default):
        """The `getattr` builtin of restricted code."""
        if not isinstance(name, str):
            raise TypeError("attribute name must be a string")
        try:
            return self.attribute(obj, name)
        except AttributeError:
            if default:
                return default[0]
            raise

    def hasattr_builtin(self, obj, name) -> bool:
        try:
            self.getattr_builtin(obj, name)
            return True
        except (AttributeError, self.error):
            return False

    def write(self, obj):
        """The target of `obj.x = ...`, `obj[k] = ...`, `del obj.x`."""
        if id(obj) in self._frozen:
            self.deny("change a container that belongs to an allowed module")
        if isinstance(obj, self.writable) or self.owned(obj):
            return obj
        self.deny(f"write to a {type(obj).__name__}")

    def inplace(self, op: str, x, y):
        if op not in _INPLACE:
            self.deny(f"use the operator {op}")
        if id(x) in self._frozen:
            self.deny("change a container that belongs to an allowed module")
        return _INPLACE[op](x, y)

    def import_(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level:
            self.deny("use relative imports")
        if fromlist:
            for item in fromlist:
                if f"{name}.{item}" not in self.modules and name not in self.modules:
                    self.deny(f"import {item!r} from {name!r}")
        elif not self.reachable(name):
            self.deny(f"import {name!r}")
        module = __import__(name, None, None, fromlist or (), 0)
        for item in fromlist or ():
            value = getattr(module, item, None)
            if isinstance(value, types.ModuleType):
                if value.__name__ not in self.modules:
                    self.deny(f"import the module {value.__name__!r}")
                self.freeze(value)
            elif not self.module_allows(module, item):
                self.deny(f"import {item!r} from {name!r}")
        self.freeze(module)
        return module

    def freeze(self, module: types.ModuleType) -> None:
        """Remember the module-level containers of an allowed module: the code may read, not change them."""
        for value in vars(module).values():
            if isinstance(value, (dict, list, set, bytearray)):
                self._frozen.add(id(value))

    def builtins_for(self) -> dict[str, Any]:
        denied = _ALWAYS_DENIED_BUILTINS | self.denied_builtins
        out = {k: v for k, v in {**safe_builtins, **_BASE_BUILTINS}.items()
               if k not in denied and not k.startswith("_")}
        if self.modules:
            out["__import__"] = self.import_
        if "getattr" not in denied:
            out["getattr"] = self.getattr_builtin
        if "hasattr" not in denied:
            out["hasattr"] = self.hasattr_builtin
        out.update(self.extra_builtins)
        return out

    def globals_for(self, module_name: str, getiter: Callable = iter) -> dict[str, Any]:
        """Globals of a restricted module: builtins and the guards RestrictedPython's bytecode calls."""
        return {
            "__builtins__": self.builtins_for(),
            "__name__": module_name,
            "__metaclass__": type,
            "_getattr_": self.attribute,
            "_getitem_": operator.getitem,
            "_getiter_": getiter,
            "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
            "_unpack_sequence_": guarded_unpack_sequence,
            "_write_": self.write,
            "_inplacevar_": self.inplace,
            "_apply_": lambda f, *args, **kwargs: f(*args, **kwargs),
            "_print_": PrintCollector,
        }


class IterationBudget:
    """`_getiter_` with a cap on iterations and a deadline, checked every 4096 items."""

    def __init__(self, max_iterations: int, max_seconds: float, error: type[Exception], what: str):
        self.max_iterations, self.max_seconds, self.error, self.what = max_iterations, max_seconds, error, what
        self.count = 0
        self.deadline = time.monotonic() + max_seconds

    def start(self) -> None:
        self.count = 0
        self.deadline = time.monotonic() + self.max_seconds

    @contextlib.contextmanager
    def paused(self):
        """Stop the clock meanwhile (a program suspended while the robot executes a motion is not running)."""
        start = time.monotonic()
        try:
            yield
        finally:
            self.deadline += time.monotonic() - start

    def iterate(self, obj):
        for item in obj:
            self.count += 1
            if self.count > self.max_iterations:
                raise self.error(f"{self.what} iterated more than {self.max_iterations} times")
            if self.count % 4096 == 0 and time.monotonic() > self.deadline:
                raise self.error(f"{self.what} ran longer than {self.max_seconds} s")
            yield item


def _unbound_on(cls: type, name: str) -> bool:
    """Whether `cls.name` is an instance method or descriptor (not a classmethod, staticmethod or value)."""
    for klass in getattr(cls, "__mro__", ()):
        raw = vars(klass).get(name, _MISSING)
        if raw is not _MISSING:
            return isinstance(raw, _UNBOUND)
    return callable(getattr(type(cls), name, None))  # found only on the metaclass (`mro`, `register`)


_MISSING = object()


def _called_name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _policy(rules: Rules) -> type[RestrictingNodeTransformer]:
    class Policy(RestrictingNodeTransformer):
        """RestrictedPython's rules, plus the imports the rules allow (and, if allowed,
        single-underscore names, on whose objects the attribute guard decides)."""

        _UNDERSCORE = re.compile(r'"([^"]+)" is an invalid (?:variable|attribute) name because it starts with "_"')

        def error(self, node, info):
            match = self._UNDERSCORE.match(info)
            if rules.allow_private_names and match and _private(match.group(1)):
                return
            super().error(node, info)

        def visit_Import(self, node):
            for alias in node.names:
                if rules.modules and not rules.reachable(alias.name):
                    self.error(node, f"import of {alias.name!r} is not allowed (allowed modules are listed in "
                                     f"{rules.doc})")
            return super().visit_Import(node)

        def visit_ImportFrom(self, node):
            module = node.module or ""
            for alias in node.names:
                names = rules.modules.get(module, ())
                allowed = names is None or alias.name in (names or ()) or f"{module}.{alias.name}" in rules.modules
                if rules.modules and (node.level or not allowed):
                    self.error(node, f"import of {alias.name!r} from {'.' * node.level}{module!r} is not allowed "
                                     f"(allowed modules are listed in {rules.doc})")
            return super().visit_ImportFrom(node)

    return Policy

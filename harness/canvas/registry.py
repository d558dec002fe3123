"""Node types and the registries that resolve them.

Executors register their node types on import (`@node_type` in
`executors/<name>/...`); a candidate may add its own in `nodeset/*.py`, which
load into an overlay registry under `candidate.<Name>` and never leak into the
default registry.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
import threading
import traceback
import types
from pathlib import Path
from typing import Any

from harness.canvas import types as T
from harness.canvas.context import BudgetExceeded, Context, GrantError  # noqa: F401  (re-exported)
from harness.canvas.node import Node, NodeType, PortSpec, SimulatorNode, _with_defaults  # noqa: F401  (re-exported)

CANDIDATE_NAMESPACE = "candidate"
COMPOSITE_TYPE = "composite"


class Registry:
    """Name -> NodeType. An overlay (candidate types) falls back to its parent."""

    def __init__(self, parent: Registry | None = None, namespace: str | None = None):
        self.parent = parent
        self.namespace = namespace
        self._types: dict[str, NodeType] = {}
        self.executor_errors: dict[str, str] = {}
        self.load_errors: list[tuple[str, str]] = []  # (file, message) from nodeset loading
        self._imported_executors: set[str] = set()

    def register(self, nt: NodeType) -> None:
        existing = self._types.get(nt.name)
        if existing is not None and existing.source != nt.source:
            raise ValueError(f"node type {nt.name!r} is already registered (by {existing.source})")
        self._types[nt.name] = nt

    def get(self, name: str) -> NodeType | None:
        nt = self._types.get(name)
        if nt is not None:
            return nt
        if self.parent is not None:
            return self.parent.get(name)
        prefix = name.split(".", 1)[0] if "." in name else None
        if prefix and prefix not in ("core", CANDIDATE_NAMESPACE) and prefix not in self._imported_executors:
            self.ensure_namespace(prefix)
            return self._types.get(name)
        return None

    def ensure_executor(self, executor: str) -> str | None:
        """Import the executor's node modules (registers its types); the error text if that failed
        (also when `executor` names a node namespace that is not an executor, e.g. `llm`)."""
        from harness.plugins import is_node_namespace

        if is_node_namespace(executor):
            return f"{executor!r} is a node namespace ({executor}.* types), not an executor"
        return self.ensure_namespace(executor)

    def ensure_namespace(self, prefix: str) -> str | None:
        """Import the modules providing the `<prefix>.*` types (an executor's, or a node namespace's
        such as `llm`, see harness.plugins); the error text if that failed.

        Another registry that itself holds `<prefix>.*` types (a test registry) counts as
        providing it; the default registry imports the provider's node modules even when one
        of its types is already registered (by a module imported for another reason)."""
        if self is not _default and any(name.startswith(prefix + ".") for name in self._types):
            return None
        if self.parent is not None:
            return self.parent.ensure_namespace(prefix)
        if prefix in self._imported_executors:
            return self.executor_errors.get(prefix)
        with _default_lock:  # runner threads may ask at once; import (and register) exactly once
            if prefix in self._imported_executors:
                return self.executor_errors.get(prefix)
            from harness.errors import ExecutorError

            try:
                for module in _provider_modules(prefix):
                    importlib.import_module(module)
            except ExecutorError as exc:
                self.executor_errors[prefix] = exc.message
            except Exception as exc:  # any import failure is reported, not raised
                self.executor_errors[prefix] = f"importing the {prefix}.* node types failed: {type(exc).__name__}: {exc}"
            self._imported_executors.add(prefix)
            return self.executor_errors.get(prefix)

    def names(self) -> list[str]:
        own = set(self._types)
        if self.parent is not None:
            own |= set(self.parent.names())
        return sorted(own)

    def all(self) -> list[NodeType]:
        return [self.get(n) for n in self.names()]

    def __contains__(self, name: str) -> bool:
        return self.get(name) is not None


def _provider_modules(prefix: str) -> tuple[str, ...]:
    """The modules registering the `<prefix>.*` types: a node namespace's, else the executor's
    (ExecutorError when neither provides it, naming the known executors)."""
    from harness.errors import ExecutorError
    from harness.executor_api import find_executor
    from harness.plugins import discover_node_namespaces, is_node_namespace

    if not is_node_namespace(prefix):
        return find_executor(prefix).node_modules
    found, broken = discover_node_namespaces()
    if prefix not in found:
        raise ExecutorError(f"node namespace {prefix!r} is broken: {broken[prefix]}")
    return found[prefix].node_modules


_default: Registry | None = None
_default_lock = threading.RLock()
_target = threading.local()


def default_registry() -> Registry:
    """Core types plus every executor imported so far."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Registry()
                from harness.canvas.core_nodes import CORE_TYPES

                for name, spec, cls in CORE_TYPES:
                    node_type(name, registry=_default, **spec)(cls)
    return _default


def _registration_target() -> Registry:
    target = getattr(_target, "registry", None)
    return target if target is not None else default_registry()


def _port(name: str, spec: Any, is_input: bool) -> PortSpec:
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, dict) or "type" not in spec:
        raise ValueError(f"port {name!r}: expected a type string or a dict with 'type'")
    T.parse(spec["type"])  # raises TypeSyntaxError early, at registration
    return PortSpec(
        name=name,
        type=spec["type"],
        required=bool(spec.get("required", True)) if is_input else True,
        privileged=bool(spec.get("privileged", False)) and not is_input,
        doc=spec.get("doc", ""),
    )


def node_type(name: str, *, inputs: dict | None = None, outputs: dict | None = None,
              config_schema: dict | None = None, role: str | None = None, doc: str = "",
              uses_model: bool = False, state: dict | None = None, registry: Registry | None = None,
              extends: str | None = None):
    """Class decorator registering a Node subclass as node type `name`.

    `inputs`/`outputs`: port -> type string, or `{"type", "required", "privileged", "doc"}`.
    `state`: `{"read": [...], "write": [...]}` cells the type touches (`"$key"` = the cell
    named by `config[key]`), checked statically against the graph's grants.
    `registry`: register there instead of the default (tests, overlays).
    `extends`: an existing type (e.g. "babyai.FrontierPlanner") this one builds on: its
    behaviour (methods not overridden), ports, role, state, doc and config schema carry
    over; given ports and config properties are added to (or replace) the parent's, so
    the parent's config defaults stay in force. Subclassing a registered class in
    Python does the same without `extends`.
    A candidate type's `role` must be a role some existing type already has.
    """

    def decorate(cls):
        if not (isinstance(cls, type) and issubclass(cls, Node)):
            raise TypeError(f"@node_type({name!r}) must decorate a Node subclass")
        target = registry or _registration_target()
        full = name
        if target.namespace and not name.startswith(target.namespace + "."):
            full = f"{target.namespace}.{name}"
        parent = _extended_type(cls, extends, target)
        if parent is not None and not issubclass(cls, parent.cls):
            cls = type(cls.__name__, (cls, parent.cls), {"__module__": cls.__module__, "__qualname__": cls.__qualname__})
        schema = _merged_schema(parent, config_schema)
        if target.namespace:
            # Candidate-authored types are checked as they load; built-in schemas are
            # checked by the test suite, so that start-up does not import jsonschema.
            from jsonschema import Draft202012Validator

            Draft202012Validator.check_schema(schema)
        own_role = role or (parent.role if parent else None) or ("simulator" if cls.is_simulator else None)
        if target.namespace == CANDIDATE_NAMESPACE and role is not None:
            _check_role(full, role, target)
        nt = NodeType(
            name=full,
            cls=cls,
            inputs={**(parent.inputs if parent else {}), **{k: _port(k, v, True) for k, v in (inputs or {}).items()}},
            outputs={**(parent.outputs if parent else {}),
                     **{k: _port(k, v, False) for k, v in (outputs or {}).items()}},
            config_schema=schema,
            role=own_role,
            doc=doc or (cls.__doc__ or "").strip().split("\n")[0] or (parent.doc if parent else ""),
            uses_model=uses_model or bool(parent and parent.uses_model),
            is_simulator=bool(cls.is_simulator),
            state_read=tuple((state or {}).get("read", parent.state_read if parent and not state else ())),
            state_write=tuple((state or {}).get("write", parent.state_write if parent and not state else ())),
            source=f"{cls.__module__}.{cls.__qualname__}",
        )
        target.register(nt)
        cls.node_type = nt
        return cls

    return decorate


def _extended_type(cls, extends: str | None, target: Registry) -> NodeType | None:
    """The type a new one builds on: `extends=` by name, else a registered Python base class."""
    if extends is not None:
        parent = target.get(extends)
        if parent is None:
            raise ValueError(f"extends={extends!r}: no such node type (see `architect nodes`)")
        if parent.is_simulator:
            raise ValueError(f"extends={extends!r}: a simulator cannot be extended by a candidate type")
        return parent
    if "node_type" not in cls.__dict__:
        inherited = getattr(cls, "node_type", None)
        return inherited if isinstance(inherited, NodeType) else None
    return None


def _merged_schema(parent: NodeType | None, own: dict | None) -> dict:
    """The parent's config schema with `own`'s properties and required keys added."""
    if parent is None:
        return own if own is not None else {"type": "object"}
    merged = dict(parent.config_schema)
    if own is None:
        return merged
    merged.update({k: v for k, v in own.items() if k not in ("properties", "required")})
    merged["properties"] = {**parent.config_schema.get("properties", {}), **own.get("properties", {})}
    required = list(dict.fromkeys([*parent.config_schema.get("required", []), *own.get("required", [])]))
    if required:
        merged["required"] = required
    return merged


def _check_role(full: str, role: str, target: Registry) -> None:
    base = target.parent if target.parent is not None else target
    known = sorted({nt.role for nt in base.all() if nt.role and nt.role != "simulator"})
    if role not in known:
        raise ValueError(f"{full}: unknown role {role!r}; use one of the existing roles ({', '.join(known)}) "
                         "or leave role out")


# -- candidate nodeset overlays ------------------------------------------------

_overlay_cache: dict[tuple, Registry] = {}
_load_lock = threading.RLock()


def _nodeset_files(candidate_dir: Path) -> list[Path]:
    folder = candidate_dir / "nodeset"
    return sorted(folder.glob("*.py")) if folder.is_dir() else []


def for_graph(graph: dict | None, candidate_dir: str | Path | None = None, base: Registry | None = None) -> Registry:
    """The registry a graph resolves against: default (or `base`) + its executor
    + the candidate's `nodeset/*.py` types (as `candidate.<Name>`), if any. The
    candidate's files run in a sandbox process (harness.canvas.isolated), never here."""
    base = base or default_registry()
    executor = graph.get("executor") if isinstance(graph, dict) else None
    executor = executor if isinstance(executor, str) and executor else None
    if executor:
        base.ensure_executor(executor)
    if candidate_dir is None:
        return base
    files = _nodeset_files(Path(candidate_dir))
    if not files:
        return base
    # keyed by content, not mtime: a proposer may rewrite a file twice within one clock tick
    from harness.canvas.restricted import trusted

    key = (str(Path(candidate_dir).resolve()), id(base), trusted()) + tuple(
        (f.name, hashlib.sha1(f.read_bytes()).hexdigest()) for f in files)
    with _load_lock:
        cached = _overlay_cache.get(key)
        if cached is not None:
            return cached
        if trusted():
            overlay = declare_nodeset(files, Path(candidate_dir), executor, base)
        else:
            from harness.canvas.isolated import isolated_overlay

            overlay = Registry(parent=base, namespace=CANDIDATE_NAMESPACE)
            isolated_overlay(files, Path(candidate_dir), overlay, executor)
        _overlay_cache[key] = overlay
        return overlay


def declare_nodeset(files: list[Path], candidate_dir: Path, executor: str | None,
                    base: Registry | None = None) -> Registry:
    """Run the nodeset files in THIS process (restricted) into a new overlay: what the
    sandbox process does (harness.canvas.isolated), and the trusted test mode."""
    base = base or default_registry()
    if executor:
        base.ensure_executor(executor)
    overlay = Registry(parent=base, namespace=CANDIDATE_NAMESPACE)
    digest = hashlib.sha1(str(candidate_dir.resolve()).encode()).hexdigest()[:10]
    with _load_lock:
        previous = getattr(_target, "registry", None)
        _target.registry = overlay
        try:
            for path in files:
                _load_nodeset_file(path, f"_architect_candidate_{digest}_{path.stem}", overlay)
        finally:
            _target.registry = previous
    return overlay


def _load_nodeset_file(path: Path, module_name: str, overlay: Registry) -> None:
    """Run a candidate's node file restricted (harness.canvas.restricted); its
    failures become `overlay.load_errors`, reported by validation."""
    from harness.canvas.restricted import contain, exec_candidate_module
    from harness.fileio import read_text

    try:
        module = types.ModuleType(module_name)
        module.__file__ = str(path)
        sys.modules[module_name] = module
        exec_candidate_module(read_text(path, "node file"), str(path), module)
        for nt in list(overlay._types.values()):
            if nt.cls.__module__ == module_name:
                contain(nt.cls)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        frames = traceback.extract_tb(exc.__traceback__)
        line = next((f.lineno for f in reversed(frames) if f.filename == str(path)), None)
        where = f"nodeset/{path.name}" + (f":{line}" if line else "")
        if isinstance(exc, SyntaxError) and exc.lineno:
            where = f"nodeset/{path.name}:{exc.lineno}"
        overlay.load_errors.append((where, f"{type(exc).__name__}: {exc}"))


def alphabet(executor: str | None = None, candidate_dir: str | Path | None = None) -> Registry:
    """The types `architect nodes` lists: core and those imported so far, plus the executor's
    and the candidate's `nodeset/` types when given. A failing executor or nodeset raises UserError."""
    from harness.errors import UserError

    registry = default_registry()
    if executor:
        error = registry.ensure_executor(executor)
        if error:
            raise UserError(error)
    if candidate_dir:
        registry = for_graph({"executor": executor} if executor else {}, candidate_dir)
        for where, message in registry.load_errors:
            raise UserError(f"{where}: {message}")
    return registry

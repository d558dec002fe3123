"""The one way plug-ins are found: each kind is a spec published under an entry-point group.

| kind            | entry-point group            | spec                                   |
|-----------------|------------------------------|----------------------------------------|
| executor        | `architect.executors`        | `harness.executor_api.ExecutorSpec`    |
| search variant  | `architect.variants`         | `harness.variant_api.VariantSpec`      |
| node namespace  | `architect.node_namespaces`  | `NodeNamespace` (below)                |

A spec is the one place everything its plug-in contributes is declared (node
modules, seeds, data sets, tier generator, CLI commands, ...); what it names
is a "module:attr" or module string, imported on first use. The module named
by the entry point must be light: discovery imports it.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from typing import Any

from harness.entry_points import entry_points

NODE_NAMESPACE_GROUP = "architect.node_namespaces"
REINSTALL_HINT = "a plug-in registers through its package's entry points: re-run `pip install -e .` after adding one"


def load_ref(ref: str) -> Any:
    """Import `package.module:attribute` (or just `package.module`)."""
    module, _, attr = ref.partition(":")
    value = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        value = getattr(value, part)
    return value


def load_specs(group: str, spec_type: type) -> tuple[dict[str, Any], dict[str, str]]:
    """({name: spec}, {name: why it is broken}) of every entry point in `group`.

    A spec must be a `spec_type` whose `name` is the entry point's and whose
    `problems()` is empty."""
    found: dict[str, Any] = {}
    broken: dict[str, str] = {}
    for name, ref in entry_points(group):
        try:
            spec = load_ref(ref)
        except Exception as exc:  # noqa: BLE001 - a broken plug-in is reported, not fatal here
            broken[name] = f"loading {ref} failed: {type(exc).__name__}: {exc}"
            continue
        if not isinstance(spec, spec_type):
            problems = [f"is a {type(spec).__name__}, not a {spec_type.__name__}"]
        else:
            problems = spec.problems()
            if spec.name != name:
                problems.append(f"entry point {name!r} names a spec called {spec.name!r}")
        if problems:
            broken[name] = f"{ref}: " + "; ".join(problems)
        else:
            found[name] = spec
    return found, broken


@dataclass(frozen=True)
class NodeNamespace:
    """Node types under `<name>.*` provided by a package that is not an executor (e.g. `llm.*`).

    Importing `node_modules` registers the types in the default registry; the
    registry does that on the first lookup of a `<name>.*` type."""

    name: str
    node_modules: tuple[str, ...]
    doc: str = ""

    def problems(self) -> list[str]:
        out = [] if self.name.isidentifier() else [f"name {self.name!r} is not an identifier"]
        if not self.node_modules:
            out.append("node_modules is empty")
        return out


_namespaces: tuple[dict[str, NodeNamespace], dict[str, str]] | None = None
_lock = threading.Lock()


def discover_node_namespaces() -> tuple[dict[str, NodeNamespace], dict[str, str]]:
    """Every installed node namespace, by name, and the broken registrations."""
    global _namespaces
    with _lock:
        if _namespaces is None:
            _namespaces = load_specs(NODE_NAMESPACE_GROUP, NodeNamespace)
        return dict(_namespaces[0]), dict(_namespaces[1])


def is_node_namespace(name: str) -> bool:
    """Is `name` registered as a node namespace (rather than an executor)?"""
    return any(found == name for found, _ in entry_points(NODE_NAMESPACE_GROUP))

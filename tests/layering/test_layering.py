"""Layering of the library: read from the source (AST), not from a running import.

- Only `harness.cli` imports `harness.cli`: library modules raise the errors of
  `harness.errors`, the CLI turns them into output.
- No import circle between modules of harness/ and executors/, counting
  imports inside functions too (a lazy import still couples two modules).
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("harness", "executors")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def library_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))
            if "seeds" not in p.relative_to(ROOT).parts}


def imported_names(path: Path, name: str) -> set[str]:
    """Every module name an import statement in the file names (absolute, resolved)."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.add(target)
            out.update(f"{target}.{alias.name}" for alias in node.names)
    return out


def import_graph() -> nx.DiGraph:
    modules = library_modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for target in imported_names(path, name):
            if target in modules and target != name:
                graph.add_edge(name, target)
    return graph


def test_no_library_module_imports_the_cli():
    offenders = sorted(
        f"{name} imports {target}"
        for name, path in library_modules().items() if not (name + ".").startswith("harness.cli.")
        for target in imported_names(path, name) if (target + ".").startswith("harness.cli.")
    )
    assert offenders == []


def test_no_import_circles():
    graph = import_graph()
    # a package's __init__ re-exporting its submodules is not a circle with them
    graph.remove_edges_from([(a, b) for a, b in list(graph.edges) if b.startswith(a + ".")])
    circles = sorted(sorted(c) for c in nx.simple_cycles(graph))
    assert circles == []


def test_the_walk_sees_real_imports():
    """Guards the test itself: a known edge is found, so an empty result above means something."""
    graph = import_graph()
    assert graph.has_edge("harness.canvas.registry", "harness.canvas.node")
    assert graph.has_edge("harness.rundir.loop", "harness.errors")
    assert not graph.has_edge("harness.rundir.loop", "harness.variants.random_proposer")


def test_run_directories_do_not_reach_up_into_the_variants():
    """harness.rundir drives any variant's proposer; it is handed one, it does not pick one."""
    graph = import_graph()
    upward = sorted((a, b) for a, b in graph.edges if a.startswith("harness.rundir") and b.startswith("harness.variants"))
    assert upward == []


def test_no_library_module_imports_the_tests():
    """Stand-ins that seeds use belong to their executor or variant; what only tests use lives in tests/."""
    offenders = sorted(f"{name} imports {target}" for name, path in library_modules().items()
                       for target in imported_names(path, name) if (target + ".").startswith("tests."))
    assert offenders == []


def test_the_loopback_server_base_imports_no_part_of_the_project():
    """Executors' and variants' model stand-ins build on it; it must not pull any of them in."""
    path = ROOT / "harness" / "models" / "loopback.py"
    assert sorted(t for t in imported_names(path, "harness.models.loopback")
                  if t.split(".")[0] in PACKAGES) == []


def test_the_sandbox_core_sits_below_canvas_and_models():
    """harness.sandbox is the one restricted-execution core: it imports no other part of the project."""
    imports = {t for name, path in library_modules().items() if name.startswith("harness.sandbox")
               for t in imported_names(path, name) if t.split(".")[0] in PACKAGES}
    assert sorted(t for t in imports if not t.startswith(("harness.sandbox", "harness.pysource"))) == []

"""Layering of the library, by imports and by strings (the rules: layers.py).

- No dependency breaks a layer: library -> CLI, executor -> another executor
  (a package marked SHARED is shared code, not an executor),
  production -> tests, canvas -> models/executors; a plug-in's command module
  uses only the CLI's conventions.
- No import circle between modules of harness/ and executors/.
- The checker sees what it must: a planted string dependency of each kind,
  in a temporary tree, is reported.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from layers import all_dependencies, library_modules, violations

ROOT = Path(__file__).resolve().parents[2]


def import_graph(root: Path = ROOT) -> nx.DiGraph:
    modules = library_modules(root)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for dep in all_dependencies(root):
        if dep.kind == "import" and dep.target in modules and dep.target != dep.source:
            graph.add_edge(dep.source, dep.target)
    return graph


def test_no_dependency_breaks_a_layer():
    assert violations(ROOT) == []


def test_no_import_circles():
    graph = import_graph()
    # a package's __init__ re-exporting its submodules is not a circle with them
    graph.remove_edges_from([(a, b) for a, b in list(graph.edges) if b.startswith(a + ".")])
    circles = sorted(sorted(c) for c in nx.simple_cycles(graph))
    assert circles == []


def test_the_walk_sees_real_imports_and_strings():
    """Guards the test itself: known edges are found, so an empty result above means something."""
    graph = import_graph()
    assert graph.has_edge("harness.canvas.registry", "harness.canvas.node")
    assert graph.has_edge("harness.rundir.loop", "harness.errors")
    assert not graph.has_edge("harness.rundir.loop", "harness.variants.random_proposer.proposer")
    strings = {(d.source, d.target, d.kind) for d in all_dependencies(ROOT)}
    assert ("executors.babyai", "executors.babyai.oracle", "string") in strings
    assert ("harness.variants.shaper", "harness.variants.shaper.cli", "declaration") in strings


def test_run_directories_do_not_reach_up_into_the_variants():
    """harness.rundir drives any variant's proposer; it is handed one, it does not pick one."""
    graph = import_graph()
    upward = sorted((a, b) for a, b in graph.edges if a.startswith("harness.rundir") and b.startswith("harness.variants"))
    assert upward == []


PLANTED = {
    # file -> its text; each line below breaks one rule by a string, not an import
    "harness/variants/toy/__init__.py":
        'from harness.variant_api import VariantSpec\n'
        'VARIANT = VariantSpec(name="toy", skill="s.md", fitness="mean", max_iterations=1,\n'
        '                      headless_driver="harness.cli.toy_cmds:loop_toy",\n'
        '                      commands={"toy": "harness.variants.toy.cli:toy_group"})\n',
    "harness/variants/toy/cli.py":
        'from harness.cli.conventions import emit\nRUN = "harness.cli.run_cmds:loop_cmd"\n',
    "harness/cli/toy_cmds.py": 'def loop_toy():\n    pass\n',
    "executors/alpha/__init__.py": 'TIERS = "executors.beta.tiers:expand_tier"\n',
    "executors/beta/__init__.py": 'import executors.beta.tiers\nSTAND_IN = "tests.plugins.toy_executor"\n',
    "executors/beta/tiers.py": 'def expand_tier(spec):\n    return []\n',
    "executors/common/__init__.py": 'SHARED = True\nUSES = "executors.alpha:TIERS"\n',
    "executors/gamma/__init__.py": 'import executors.common\nBODY = "executors.common:SHARED"\n',
    "harness/canvas/registry.py": 'NAMESPACES = {"llm": "harness.models"}\nSIM = "executors.alpha"\n',
    "harness/sandbox/core.py": 'from harness.canvas import registry\nfrom harness.pysource import serialised\n',
    "harness/models/loopback.py": 'SERVED = "executors.alpha"\n',
    "harness/rundir/check.py": '"""Docstrings mention harness.cli in prose; that is no dependency."""\n'
                               'HINT = "run `architect check RUN STAGING`"\n',
}


def test_planted_string_dependencies_are_reported(tmp_path):
    for rel, text in PLANTED.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = violations(tmp_path)
    assert found == sorted([
        "executors.alpha:1 string executors.beta.tiers: executor -> another executor",
        "executors.common:2 string executors.alpha: shared package -> executor",
        "executors.beta:2 string tests.plugins.toy_executor: production -> tests",
        "harness.canvas.registry:1 string harness.models: canvas -> models/executors",
        "harness.canvas.registry:2 string executors.alpha: canvas -> models/executors",
        "harness.models.loopback:1 string executors.alpha: the loopback server base -> any other module",
        "harness.sandbox.core:1 import harness.canvas: the sandbox core -> a layer above it",
        "harness.sandbox.core:1 import harness.canvas.registry: the sandbox core -> a layer above it",
        "harness.variants.toy.cli:2 string harness.cli.run_cmds: "
        "plug-in command module -> CLI internals (only harness.cli.conventions)",
        "harness.variants.toy:3 string harness.cli.toy_cmds: library -> CLI",
    ]), found

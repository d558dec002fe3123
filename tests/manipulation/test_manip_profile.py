"""The executor's profile, tiers and seeds (static: no simulator runs)."""

from __future__ import annotations

import pytest
from manipulation_kit import SEEDS

from executors import load_executor
from harness.executor_api import resolve_seed
from harness.canvas.graph import load_graph
from harness.canvas.validate import validate_graph


def test_tiers_are_sized_for_two_cores_and_probes_are_off_by_default():
    ex = load_executor("manipulation")
    smoke, search = ex.episodes("smoke"), ex.episodes("search")
    assert 3 <= len(smoke) <= 5 and 10 <= len(search) <= 40
    assert all(e["max_steps"] <= 260 for e in smoke + search)
    assert {e["level"] for e in search} == {"Lift", "Stack", "PickPlaceCan", "Door"}
    assert ex.profile["probes"] == {"logging_fault": False, "reconcile_calls": False}
    assert ex.sealed == {"holdout"}


@pytest.mark.parametrize("seed", ["voxposer", "voxposer-scripted", "vla", "vla-llm"])
def test_seeds_validate_and_resolve_by_name(seed):
    graph = load_graph(SEEDS / seed / "graph.json")
    problems = [p for p in validate_graph(graph, candidate_dir=SEEDS / seed) if p.severity == "error"]
    assert problems == []
    spec, name = resolve_seed(seed)
    assert spec.name == "manipulation" and name == seed and spec.seed_dir(seed) == SEEDS / seed

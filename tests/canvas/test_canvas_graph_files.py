"""The example graphs in tests/graphs/: valid ones validate and run in real BabyAI;
every fault listed in tests/graphs/expected/faulty_problems.json is reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.canvas import EpisodeLog, GraphRunner, apply_patch, diff_graphs, load_graph, validate_graph

GRAPHS = Path(__file__).resolve().parents[1] / "graphs"
EXPECTED = json.loads((GRAPHS / "expected" / "faulty_problems.json").read_text())
VALID = sorted(GRAPHS.glob("valid_*.json"))


def architect(*args):
    proc = subprocess.run([sys.executable, "-c", "from harness.cli import main; main()", *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_graphs_validate(path):
    assert validate_graph(load_graph(path)) == []


@pytest.mark.parametrize("name", sorted(k for k in EXPECTED if k.endswith(".json")))
def test_every_fault_is_reported_with_its_location(name):
    code, out, err = architect("validate", GRAPHS / name, "--json")
    assert code == 1, err
    problems = json.loads(out)["problems"]
    for want in EXPECTED[name]:
        hits = [p for p in problems if all(p.get(k) == v for k, v in want.items())]
        assert hits, f"{name}: expected {want}, got {[(p['code'], p['node'], p['path']) for p in problems]}"
    assert all(p["message"] and p["hint"] for p in problems)


def test_valid_minimal_runs_in_babyai_until_its_budget():
    graph = load_graph(GRAPHS / "valid_minimal.json")
    log = EpisodeLog()
    with GraphRunner(graph) as runner:
        result = runner.run_episode({"level": "BabyAI-GoToLocal-v0", "seed": 1}, log)
    assert result["error"] is None
    assert result["termination"] in ("max_steps", "sim_done", "success")
    assert 1 <= result["steps"] <= 64
    assert all(r["type"] in ("babyai.Simulator", "core.Constant") for r in log.records)


def test_valid_state_composite_runs_and_keeps_run_state():
    graph = load_graph(GRAPHS / "valid_state_composite.json")
    with GraphRunner(graph) as runner:
        for seed in (1, 2):
            result = runner.run_episode({"level": "BabyAI-GoToLocal-v0", "seed": seed})
            assert result["error"] is None, result["error"]
            assert result["steps"] == result["ticks"] <= 32
        missions = runner._shared.state["missions"]
    # the run-lifetime cell saw both episodes, one mission per tick
    assert len(missions) >= 2 and all(isinstance(m, str) for m in missions)


def test_seed_graph_validates_and_runs():
    seed = Path(__file__).resolve().parents[2] / "seeds" / "babyai" / "graph.json"
    graph = load_graph(seed)
    assert [p.to_dict() for p in validate_graph(graph, candidate_dir=seed.parent)] == []
    with GraphRunner(graph, candidate_dir=seed.parent) as runner:
        result = runner.run_episode({"level": "BabyAI-GoToLocal-v0", "seed": 0})
    assert result["error"] is None and result["steps"] >= 1


def test_readme_example_patch_turns_the_seed_into_a_valid_graph():
    root = Path(__file__).resolve().parents[2]
    seed = load_graph(root / "seeds" / "babyai" / "graph.json")
    patch = json.loads((root / "docs" / "examples" / "tap_mission.patch.json").read_text())
    patched = apply_patch(seed, patch)
    assert patched["nodes"]["mission_tap"]["type"] == "core.Passthrough"
    assert {k: v for k, v in patched["nodes"].items() if k != "mission_tap"} == seed["nodes"]
    assert [p.to_dict() for p in validate_graph(patched)] == []
    assert apply_patch(seed, diff_graphs(seed, patched)) == patched

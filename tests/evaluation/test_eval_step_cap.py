"""One owner per budget: a step or wall-clock cap set in one place (the graph's `budgets`,
or the executor profile's `budgets`) holds on every executor, enforced by the runtime
alone. Each executor runs its model-free seed on one of its smoke episodes for a few steps."""

from __future__ import annotations

import copy
import importlib.util
import json

import pytest

from executors import load_executor
from harness import PROJECT_ROOT, SEEDS_DIR
from harness.canvas.runtime import GraphRunner
from harness.executor_api import tier_episodes

CAP = 3
SMOKE_EPISODE = {"babyai": 1}  # which smoke episode (default the first): one that needs more than CAP steps


def _needs(*modules: str):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"{', '.join(missing)} not installed (pip install -e '.[test]')")


SEEDS = [
    pytest.param("babyai", "babyai", id="babyai"),
    pytest.param("mapgpt", "mapgpt-heuristic", id="mapgpt"),
    pytest.param("smartway", "smartway-heuristic", id="smartway"),
    pytest.param("eqa", "explore-eqa-heuristic", id="eqa"),
    pytest.param("manipulation", "voxposer-scripted", id="manipulation", marks=_needs("robosuite", "mujoco")),
    pytest.param("libero", "voxposer-libero-scripted", id="libero", marks=_needs("libero", "robosuite", "mujoco")),
]


@pytest.fixture(autouse=True)
def mp3d_fixture(monkeypatch):
    """The Matterport3D test fixture as the data folder (mapgpt, smartway, eqa)."""
    monkeypatch.setenv("ARCHITECT_DATA_DIR", str(PROJECT_ROOT / "tests" / "fixtures" / "mp3d"))


def _seed(name: str) -> dict:
    return json.loads((SEEDS_DIR / name / "graph.json").read_text())


def _with_budgets(graph: dict, **budgets) -> dict:
    graph = copy.deepcopy(graph)
    graph["budgets"].update(budgets)
    return graph


def _smoke_episode(executor: str, budgets: dict) -> dict:
    """A smoke episode as the profile with these `budgets` resolves it (its own tier-given
    cap dropped, so the profile's budgets decide)."""
    ex = load_executor(executor)
    chosen = ex.episodes("smoke")[SMOKE_EPISODE.get(executor, 0)]
    given = {k: v for k, v in chosen.items() if k not in ("episode_id", "max_steps", "wall_seconds")}
    return tier_episodes(ex.spec, {"episodes": [given]}, budgets)[0]


def _run(executor: str, seed: str, graph: dict, episode: dict) -> dict:
    with GraphRunner(graph, candidate_dir=SEEDS_DIR / seed) as runner:
        result = runner.run_episode(episode)
    assert result["error"] is None, result["error"]
    return result


@pytest.mark.parametrize("executor, seed", SEEDS)
def test_a_step_cap_in_the_graph_alone_holds(executor, seed):
    graph = _with_budgets(_seed(seed), max_steps=CAP)
    episode = _smoke_episode(executor, {"max_steps": 10_000, "wall_seconds": 300})
    result = _run(executor, seed, graph, episode)
    assert (result["steps"], result["termination"]) == (CAP, "max_steps")


@pytest.mark.parametrize("executor, seed", SEEDS)
def test_a_step_cap_in_the_profile_alone_holds(executor, seed):
    graph = _with_budgets(_seed(seed), max_steps=10_000)
    level_key = load_executor(executor).spec.level_key
    probe = _smoke_episode(executor, {})
    budgets = {"max_steps": 10_000, "wall_seconds": 300}
    if level_key in probe:  # executors with levels: the per-level cap is the one place
        budgets["max_steps_per_level"] = {probe[level_key]: CAP}
    else:
        budgets["max_steps"] = CAP
    episode = _smoke_episode(executor, budgets)
    assert episode["max_steps"] == CAP
    result = _run(executor, seed, graph, episode)
    assert (result["steps"], result["termination"]) == (CAP, "max_steps")


@pytest.mark.parametrize("where", ["graph", "profile"])
@pytest.mark.parametrize("executor, seed", SEEDS)
def test_a_wall_clock_cap_set_in_one_place_holds(executor, seed, where):
    tiny = 1e-6  # over before the first tick: nothing is stepped
    graph = _with_budgets(_seed(seed), wall_seconds=tiny if where == "graph" else 10_000)
    episode = _smoke_episode(executor, {"max_steps": 10_000, "wall_seconds": tiny if where == "profile" else 10_000})
    result = _run(executor, seed, graph, episode)
    assert (result["steps"], result["termination"]) == (0, "wall_time")

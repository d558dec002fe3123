"""The LIBERO simulator node: episodes from the package's registry and initial states,
the same in a fresh environment as after other episodes, the ground-truth scene, no
cameras unless asked for, bad actions refused, and the claim of fresh outputs."""

from __future__ import annotations

import pytest
from libero_kit import episode
from log_snapshot_kit import deferred_and_eager

from executors.libero import envs
from harness.canvas.episode_log import EpisodeLog
from harness.canvas.runtime import GraphRunner

pytestmark = pytest.mark.slow  # real LIBERO episodes on MuJoCo: minutes on 2 cores (python -m pytest -m slow)


def _graph(action: list[float], cameras: list[str] | None = None) -> dict:
    return {"schema_version": 1, "name": "constant-libero", "executor": "libero", "model_profile": None,
            "nodes": {"sim": {"type": "libero.Simulator", "config": {"cameras": cameras or []}},
                      "policy": {"type": "core.Constant", "config": {"value": [action]}}},
            "edges": [{"from": "policy.value", "to": "sim.actions"}],
            "budgets": {"max_steps": 520, "wall_seconds": 300}}


FORWARD = [0.5, 0.2, -0.3, 0.0, 0.0, 0.1, 1.0]
A, B = episode("libero_spatial", 1, 3, max_steps=12), episode("libero_spatial", 2, 0, max_steps=5)


def _outcome(runner, ep) -> tuple:
    log = EpisodeLog()
    result = runner.run_episode(ep, log)
    assert result["error"] is None, result["error"]
    last = [r for r in log.records if r["node"] == "sim"][-1]["outputs"]
    return result["steps"], result["termination"], last["gripper"], last["objects"]


def test_an_episode_is_the_same_in_a_fresh_environment_and_after_others(monkeypatch):
    with GraphRunner(_graph(FORWARD)) as runner:
        first = _outcome(runner, A)
        _outcome(runner, B)
        again = _outcome(runner, A)
        monkeypatch.setattr(envs, "_cache", type(envs._cache)())  # a new worker: no environment built yet
        fresh = _outcome(runner, A)
    assert first == again == fresh
    assert first[:2] == (12, "max_steps")  # the runtime's cap (the episode's), not the simulator's


def test_the_scene_is_the_tasks_objects_fixtures_and_regions():
    log = EpisodeLog()
    with GraphRunner(_graph(FORWARD)) as runner:
        runner.run_episode(episode("libero_goal", 0, 0, max_steps=1), log)
        sim = runner.nodes["sim"]
        objects = sim.scene.objects()
        assert sim.instruction == "open the middle drawer of the cabinet"
        assert "images" not in sim._outputs(None)  # no camera asked for: none rendered
        assert sim.env.env.has_offscreen_renderer is False
    kinds = {name: spec["kind"] for name, spec in objects.items()}
    assert kinds["akita_black_bowl_1"] == "object" and kinds["wooden_cabinet_1"] == "fixture"
    assert kinds["wooden_cabinet_1_middle_region"] == "region"
    for spec in objects.values():
        low, high = spec["aabb"]
        assert all(lo <= hi for lo, hi in zip(low, high))
    bowl = objects["akita_black_bowl_1"]
    assert bowl["aabb"][0][2] <= bowl["position"][2] <= bowl["aabb"][1][2] + 1e-6


def test_a_malformed_action_is_a_node_error():
    with GraphRunner(_graph([0.0, 0.0, 1.0])) as runner:
        result = runner.run_episode(episode("libero_spatial", 1, 3, max_steps=5))
    assert result["termination"] == "node_error" and "must have 7 numbers" in result["error"]


def test_an_initial_state_the_task_does_not_have_is_refused():
    with GraphRunner(_graph(FORWARD)) as runner:
        result = runner.run_episode(episode("libero_spatial", 1, 50, max_steps=5))
    assert result["termination"] == "node_error" and "has 50 initial states, not 50" in result["error"]


def test_the_simulators_claim_of_fresh_outputs_holds_camera_frames_included():
    """Its steps are encoded after later steps ran: the deferred log must equal an eager snapshot."""
    graph = _graph(FORWARD, cameras=["agentview"])
    graph["nodes"]["sim"]["config"]["camera_size"] = 64
    with GraphRunner(graph) as runner:
        assert runner.nodes["sim"].fresh_outputs
        logged, eager = deferred_and_eager(runner, dict(B, max_steps=4))
    sims = [r for r in logged if r[0] == "sim"]
    assert len(sims) == 5 and all(r[3]["images"]["agentview"] for r in sims)
    assert logged == eager

"""An episode is a function of (candidate, episode) alone: the same in a fresh worker
process as after other episodes in a long-lived one (paired comparisons, the result
cache and gained/lost episodes rely on it); the simulator's claim of fresh outputs."""

from __future__ import annotations

from log_snapshot_kit import deferred_and_eager
from manipulation_kit import SEEDS, seed_graph

from executors.manipulation import envs
from harness.canvas.runtime import GraphRunner

LIFT_103 = {"level": "Lift", "seed": 103, "episode_id": "Lift:103", "max_steps": 25}
LIFT_104 = {"level": "Lift", "seed": 104, "episode_id": "Lift:104", "max_steps": 10}


def _outcomes(episodes: list[dict]) -> list[tuple]:
    with GraphRunner(seed_graph("voxposer-scripted"), candidate_dir=SEEDS / "voxposer-scripted") as runner:
        results = [runner.run_episode(episode) for episode in episodes]
    for result in results:
        assert result["error"] is None, result["error"]
    return [(r["success"], r["steps"], r["reward"], r["termination"]) for r in results]


def test_an_episode_is_the_same_in_a_new_worker_and_after_other_episodes(monkeypatch):
    (here,) = _outcomes([LIFT_103])  # this process's environment, after whatever ran before
    monkeypatch.setattr(envs, "_cache", {})  # what a newly started worker process has: no environment yet
    other, fresh = _outcomes([LIFT_104, LIFT_103])  # a new environment, another episode first
    assert fresh == here  # exact: success, steps and the float reward
    assert other[1] == LIFT_104["max_steps"]
    # and the scene itself: both environments built the same model (Lift samples its cube's size at build time)
    built = envs.make_env("Lift")
    monkeypatch.undo()
    assert (envs.make_env("Lift").sim.model.geom_size == built.sim.model.geom_size).all()


def test_the_simulators_claim_of_fresh_outputs_holds_camera_frames_included():
    """Its steps are encoded after later steps ran: the deferred log must equal an eager snapshot."""
    graph = seed_graph("voxposer-scripted")
    graph["nodes"]["sim"]["config"].update(cameras=["agentview"], camera_size=32)
    with GraphRunner(graph, candidate_dir=SEEDS / "voxposer-scripted") as runner:
        assert runner.nodes["sim"].fresh_outputs
        logged, eager = deferred_and_eager(runner, dict(LIFT_104, max_steps=6))
    sims = [r for r in logged if r[0] == "sim"]
    assert len(sims) == 7 and all(r[3]["images"]["agentview"] for r in sims)
    assert logged == eager

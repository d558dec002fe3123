"""An episode is a function of (candidate, episode) alone: the same in a fresh worker
process as after other episodes in a long-lived one (paired comparisons, the result
cache and gained/lost episodes rely on it)."""

from __future__ import annotations

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

"""The BabyAI bot as the ceiling, on the same episodes and with the same result keys."""

from __future__ import annotations

from executors import load_executor


def test_oracle_solves_search_episodes_with_runner_result_keys(seed_graph):
    from harness.canvas.runtime import GraphRunner

    ex = load_executor("babyai")
    episodes = ex.episodes("search")
    picked = [episodes[i] for i in range(0, len(episodes), 10)]  # one of every level block
    runner = GraphRunner(seed_graph)
    agent = runner.run_episode(picked[0])
    runner.close()
    for episode in picked:
        result = ex.oracle(episode)
        actions = result.pop("actions")  # what it did, for its episode log (not a result key)
        assert set(agent) == set(result) and len(actions) == result["steps"]
        assert set(agent["metrics"]) == set(result["metrics"])
        assert result["success"], (episode, result["metrics"]["termination"], result["error"])
        assert result["termination"] == "success" and result["error"] is None
        assert 0 < result["reward"] <= 1
        assert 1 <= result["steps"] <= episode["max_steps"]
        assert 0 < result["metrics"]["path_efficiency"] <= 1
        assert result["metrics"]["level"] == episode["level"] and result["metrics"]["seed"] == episode["seed"]


def test_oracle_is_deterministic():
    ex = load_executor("babyai")
    episode = ex.episodes("search")[-1]
    first, second = ex.oracle(episode), ex.oracle(episode)
    first.pop("wall_seconds"), second.pop("wall_seconds")
    assert first == second


def test_bot_crash_is_recorded_as_oracle_failure():
    ex = load_executor("babyai")
    result = ex.oracle({"level": "BabyAI-KeyInBox-v0", "seed": 0})
    assert result["success"] is False and result["reward"] == 0.0
    assert result["termination"] == "node_error" and result["metrics"]["termination"] == "oracle_error"
    assert "AssertionError" in result["error"]

"""Longest-expected-first scheduling: the order from the previous evaluation of the same
tier, the recorded durations as a hint that can never break an evaluation, and the
makespan against its lower bound in metrics.json."""

from __future__ import annotations

import pytest
from eval_candidates import make_candidate

from harness.evaluation import evaluate
from harness.evaluation.schedule import EpisodeDurations, longest_first, makespan_report


def _tasks(*ids: str) -> list[dict]:
    return [{"index": i, "episode": {"episode_id": e}} for i, e in enumerate(ids)]


def _ids(tasks: list[dict]) -> list[str]:
    return [t["episode"]["episode_id"] for t in tasks]


def test_longest_expected_runs_first_and_an_unmeasured_episode_is_expected_to_take_the_mean():
    tasks = _tasks("a", "b", "c", "d")
    assert _ids(longest_first(tasks, {"a": 1.0, "b": 5.0, "c": 3.0})) == ["b", "c", "d", "a"]  # d: mean 3, after c
    assert _ids(longest_first(tasks, {})) == ["a", "b", "c", "d"]


def test_the_bound_is_the_longest_episode_or_the_total_over_the_slots():
    spans = [(0.0, 4.0), (0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]  # 7 s of work on 2 slots, longest 4
    report = makespan_report(spans, 2, "longest_expected_first")
    assert (report["lower_bound_seconds"], report["makespan_seconds"], report["makespan_over_bound"]) == (4.0, 4.0, 1.0)
    report = makespan_report([(0.0, 3.0), (3.0, 6.0), (0.0, 2.0)], 2, "tier")
    assert report["lower_bound_seconds"] == 4.0 and report["makespan_over_bound"] == 1.5 and report["order"] == "tier"
    assert makespan_report([], 2, "tier") is None


def test_durations_merge_and_a_damaged_file_only_loses_the_order(tmp_path):
    store = EpisodeDurations("babyai", "smoke", root=tmp_path)
    store.record({"x:1": 2.0})
    store.record({"x:2": 1.0, "x:1": 3.0})
    assert store.load() == {"x:1": 3.0, "x:2": 1.0}
    assert EpisodeDurations("babyai", "search", root=tmp_path).load() == {}
    store.path.write_text('{"format": 1, "executor": "babyai", "tier": "smoke", "seconds": {"x:1": -1}}')
    assert store.load() == {}
    store.path.write_text("{not json")
    assert store.load() == {}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_second_evaluation_of_the_tier_runs_longest_first_and_reports_its_makespan(eval_env, tmp_path, workers):
    first = evaluate(make_candidate(tmp_path / "a"), "smoke", workers=workers, use_cache=False,
                     progress=False)
    assert first["schedule"]["order"] == "tier"  # nothing measured yet
    recorded = EpisodeDurations("babyai", "smoke").load()
    assert set(recorded) == {r["episode_id"] for r in first["episodes"]}
    # another candidate, same tier: the order comes from the first one's episodes
    second = evaluate(make_candidate(tmp_path / "b", max_steps=40), "smoke", workers=workers, use_cache=False,
                      progress=False)
    schedule = second["schedule"]
    assert schedule["order"] == "longest_expected_first" and schedule["episodes"] == second["n"]
    assert schedule["slots"] == second["in_flight"]
    longest = max(r["wall_seconds"] for r in second["episodes"])
    total = sum(r["wall_seconds"] for r in second["episodes"])
    assert schedule["lower_bound_seconds"] == pytest.approx(max(longest, total / workers), abs=1e-3)
    assert schedule["makespan_seconds"] >= longest - 1e-3


def test_episodes_served_from_the_cache_are_not_scheduled(eval_env, tmp_path):
    cand = make_candidate(tmp_path / "a")
    evaluate(cand, "smoke", workers=1, progress=False)
    again = evaluate(cand, "smoke", workers=1, progress=False)
    assert again["cached"] == again["n"] and again["schedule"] is None


def test_a_model_calling_graph_keeps_its_own_durations(eval_env, tmp_path):
    """Its episodes' lengths follow its model calls, not the simulator's steps: the order
    recorded by a graph without a model is not used for it, nor the other way round."""
    from eval_candidates import make_model_candidate

    from harness.models.loopback import LoopbackServer

    evaluate(make_candidate(tmp_path / "plain"), "smoke", workers=1, use_cache=False, progress=False)
    with LoopbackServer(lambda api, system, messages, body: "left") as server:
        cand = make_model_candidate(tmp_path / "model", server.openai_url, concurrency=2)
        first = evaluate(cand, "smoke", workers=1, use_cache=False, progress=False)
        second = evaluate(cand, "smoke", workers=1, use_cache=False, progress=False)
    assert first["schedule"]["order"] == "tier" and second["schedule"]["order"] == "longest_expected_first"
    assert set(EpisodeDurations("babyai", "smoke-model").load()) == {r["episode_id"] for r in first["episodes"]}
    assert EpisodeDurations("babyai", "smoke").load()  # the plain graph's record stays its own

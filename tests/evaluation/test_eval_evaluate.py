"""evaluate() end to end on small candidates run by the real canvas runtime:
determinism across worker counts, agent errors, budgets, hangs, crashes,
the cache and metrics.json."""

from __future__ import annotations

import json

import pytest
from eval_candidates import make_candidate

import executors
from harness.errors import UserError
from harness.evaluation import evaluate, smoke_gate
from harness.rundir.tiers import run_tier
from harness.schemas import validate_instance
from harness.tier_groups import balanced_subset

TIMING_KEYS = {"wall_seconds"}


def _ids(tier="smoke", episodes=None):
    """The ids `evaluate(..., episodes=N)` runs: N taken round-robin over the tier's levels."""
    ex = executors.load_executor("babyai")
    chosen = ex.episodes(tier)
    return [e["episode_id"] for e in (balanced_subset(chosen, episodes, "level") if episodes else chosen)]


def _stable(metrics):
    """The metrics with the fields that legitimately vary between runs removed."""
    eps = [{**{k: v for k, v in r.items() if k not in TIMING_KEYS},
            "metrics": {k: v for k, v in r["metrics"].items() if not k.endswith("_seconds")}}
           for r in metrics["episodes"]]
    keep = {k: v for k, v in metrics.items()
            if k not in ("wall_seconds", "workers", "in_flight", "threads_per_worker", "started_at", "episodes",
                         "schedule")}
    return keep, eps


def test_identical_metrics_with_one_and_two_workers(eval_env, tmp_path):
    cand = make_candidate(tmp_path / "cand")
    one = evaluate(cand, "search", episodes=8, workers=1, out_dir=tmp_path / "w1", use_cache=False, progress=False)
    two = evaluate(cand, "search", episodes=8, workers=2, out_dir=tmp_path / "w2", use_cache=False, progress=False)
    assert one["workers"] == 1 and two["workers"] == 2
    assert _stable(one) == _stable(two)
    assert [r["episode_id"] for r in one["episodes"]] == _ids("search", 8)
    assert one["complete"] and one["n"] == 8 and one["infra_failures"] == 0
    successes = sum(r["success"] for r in one["episodes"])
    assert one["primary"]["mean"] == pytest.approx(successes / 8)
    lo, hi = one["primary"]["ci95"]
    assert one["primary"]["ci_method"] == "wilson" and lo <= one["primary"]["mean"] <= hi
    assert one["secondary"]["steps"] == pytest.approx(sum(r["steps"] for r in one["episodes"]) / 8)

    # metrics.json on disk is the returned dict and matches its schema
    on_disk = json.loads((tmp_path / "w2" / "metrics.json").read_text())
    assert validate_instance("metrics", on_disk) == []
    assert on_disk["candidate"]["hash"] == two["candidate"]["hash"]
    assert on_disk["graph"]["name"] == "eval-test-none"

    # one JSONL per episode: a header, then one record per node firing
    rec = two["episodes"][0]
    lines = [json.loads(x) for x in (tmp_path / "w2" / rec["log"]).read_text().splitlines()]
    firings = [x for x in lines if x["kind"] == "firing"]
    assert lines[0]["kind"] == "episode" and lines[0]["episode"]["episode_id"] == rec["episode_id"]
    # per tick: the policy fires, then the simulator steps; plus the simulator's reset
    assert len(firings) == 2 * rec["steps"] + 1
    assert {f["node"] for f in firings} == {"sim", "policy"}
    assert len(list((tmp_path / "w2" / "episodes").glob("*.jsonl"))) == 8


def test_raising_node_fails_its_episode_and_the_evaluation_finishes(eval_env, tmp_path):
    target = _ids("smoke", 3)[1]
    cand = make_candidate(tmp_path / "cand", misbehave="raise", on_episodes=[target])
    m = evaluate(cand, "smoke", episodes=3, workers=2, out_dir=tmp_path / "out", progress=False)
    bad = next(r for r in m["episodes"] if r["episode_id"] == target)
    assert bad["termination"] == "node_error" and not bad["success"]
    assert "policy exploded" in bad["error"] and bad["infra_error"] is None
    others = [r for r in m["episodes"] if r["episode_id"] != target]
    assert all(r["error"] is None for r in others)
    assert m["complete"] is True and m["agent_errors"] == 1 and m["n"] == 3
    gate = smoke_gate(m)
    assert gate["passed"] is False
    assert any(target in reason and "policy exploded" in reason for reason in gate["reasons"])
    # the firing that raised is in the episode's log
    log = (tmp_path / "out" / bad["log"]).read_text().splitlines()
    assert any(json.loads(x).get("error", "") and "ValueError" in json.loads(x)["error"] for x in log[1:])
    # an episode that ended in an error is not cached: it runs again
    again = evaluate(cand, "smoke", episodes=3, workers=2, progress=False)
    assert [r["cached"] for r in again["episodes"]] == [r["episode_id"] != target for r in again["episodes"]]


def test_never_stopping_candidate_ends_on_its_step_budget(eval_env, tmp_path):
    cand = make_candidate(tmp_path / "cand", endless=True, max_steps=30)
    m = evaluate(cand, "smoke", episodes=2, workers=1, out_dir=tmp_path / "out", progress=False)
    assert [r["termination"] for r in m["episodes"]] == ["max_steps", "max_steps"]
    assert all(r["steps"] == 30 and not r["success"] for r in m["episodes"])
    assert m["complete"] and smoke_gate(m)["passed"] is True  # it ran cleanly; it just failed the task

    slow = make_candidate(tmp_path / "slow", misbehave="sleep", sleep_s=0.3, endless=True, wall_seconds=0.5)
    m = evaluate(slow, "smoke", episodes=1, workers=1, progress=False)
    assert m["episodes"][0]["termination"] == "wall_time" and m["complete"]
    # a result cut by the wall clock depends on the machine: never cached
    assert evaluate(slow, "smoke", episodes=1, workers=1, progress=False)["cached"] == 0


def test_hanging_episode_is_killed_retried_and_marked_infra(eval_env, tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_TEST_ARM", "1")
    monkeypatch.setenv("ARCHITECT_HANG_GRACE_SECONDS", "0.5")
    target = _ids("smoke", 3)[0]
    cand = make_candidate(tmp_path / "cand", misbehave="hang", on_episodes=[target], when_env="EVAL_TEST_ARM",
                          wall_seconds=1.0)
    m = evaluate(cand, "smoke", episodes=3, workers=2, out_dir=tmp_path / "out", progress=False)
    hung = m["episodes"][0]
    assert hung["episode_id"] == target
    assert hung["termination"] == "infra_error" and hung["attempts"] == 2 and "hung" in hung["infra_error"]
    assert all(r["infra_error"] is None and r["steps"] > 0 for r in m["episodes"][1:])
    assert m["complete"] is False and m["infra_failures"] == 1 and m["n"] == 2
    gate = smoke_gate(m)
    assert not gate["passed"] and any("incomplete" in r for r in gate["reasons"])
    assert validate_instance("metrics", m) == []


def test_dying_worker_is_replaced_and_episode_marked_infra(eval_env, tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_TEST_ARM", "1")
    target = _ids("smoke", 4)[1]
    cand = make_candidate(tmp_path / "cand", misbehave="exit", on_episodes=[target], when_env="EVAL_TEST_ARM")
    m = evaluate(cand, "smoke", episodes=4, workers=2, out_dir=tmp_path / "out", progress=False)
    dead = m["episodes"][1]
    assert dead["infra_error"] and "exit code 13" in dead["infra_error"] and dead["attempts"] == 2
    assert [r["infra_error"] for r in m["episodes"][0:1] + m["episodes"][2:]] == [None, None, None]
    assert m["complete"] is False
    # what `architect evaluate --json` prints says so (evaluator.md reruns an incomplete evaluation)
    verdict = run_tier(cand, tmp_path / "tier", kind="eval", tier="smoke", episodes=4, use_cache=False)
    assert verdict["complete"] is False and verdict["infra_failures"] == 1 and not verdict["passed"]


def test_second_identical_run_is_served_from_the_cache(eval_env, tmp_path):
    cand = make_candidate(tmp_path / "cand")
    first = evaluate(cand, "smoke", episodes=4, workers=2, out_dir=tmp_path / "a", progress=False)
    assert first["cached"] == 0
    second = evaluate(cand, "smoke", episodes=4, workers=2, out_dir=tmp_path / "b", progress=False)
    assert second["cached"] == 4 and all(r["cached"] for r in second["episodes"])
    assert _stable(first)[1] == [{**r, "cached": False} for r in _stable(second)[1]]
    # the logs come back from the cache too
    for r in second["episodes"]:
        assert (tmp_path / "b" / r["log"]).read_text() == (tmp_path / "a" / r["log"]).read_text()
    # --no-cache re-runs everything
    third = evaluate(cand, "smoke", episodes=4, workers=2, out_dir=tmp_path / "c", use_cache=False, progress=False)
    assert third["cached"] == 0
    # any change to a candidate file is a different candidate
    (cand / "nodeset" / "evalnodes.py").write_text((cand / "nodeset" / "evalnodes.py").read_text() + "\n# edit\n")
    fourth = evaluate(cand, "smoke", episodes=4, workers=2, out_dir=tmp_path / "d", progress=False)
    assert fourth["cached"] == 0 and fourth["candidate"]["hash"] != first["candidate"]["hash"]


def test_malformed_and_invalid_graphs_fail_before_any_worker(eval_env, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "graph.json").write_text('{"schema_version": 1,\n  "executor": "babyai", nodes: {}}')
    with pytest.raises(UserError, match=r"graph.json:2:\d+"):
        evaluate(bad, "smoke", progress=False)
    cand = make_candidate(tmp_path / "cand")
    graph = json.loads((cand / "graph.json").read_text())
    graph["nodes"]["policy"]["type"] = "candidate.NoSuchPolicy"
    (cand / "graph.json").write_text(json.dumps(graph))
    with pytest.raises(UserError) as info:
        evaluate(cand, "smoke", out_dir=tmp_path / "out", progress=False)
    assert "unknown_type" in info.value.message and "policy" in info.value.message
    assert any(p["code"] == "unknown_type" for p in info.value.details)
    assert not (tmp_path / "out").exists()
    with pytest.raises(UserError, match="no tier"):
        evaluate(make_candidate(tmp_path / "ok"), "nonexistent", progress=False)


def test_babyai_seed_gives_identical_results_with_one_and_two_workers(eval_env, tmp_path):
    from harness.executor_api import seed_graph_path

    one = evaluate(seed_graph_path("babyai").parent, "search", episodes=6, workers=1, use_cache=False, progress=False)
    two = evaluate(seed_graph_path("babyai").parent, "search", episodes=6, workers=2, use_cache=False, progress=False)
    assert _stable(one) == _stable(two)
    assert one["complete"] and all(r["error"] is None for r in one["episodes"])

"""The eqa seeds end to end: the model-free seed on the smoke tier, the answer-reading
oracle, the model seed through the real openai client against a loopback server,
conformal calibration, `architect init` and `architect executors`."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from navigation_testkit import FIXTURE, SCRIPTED_MODEL, SEEDS, needs_full_eqa_data, scripted_vlm

from executors import load_executor
from executors.eqa.calibrate import calibrate, conformal_threshold
from harness.errors import UserError
from harness.evaluation import evaluate
from harness.models.loopback import LoopbackServer


def architect(*args, env=None, timeout=600):
    return subprocess.run(["architect", *args], capture_output=True, text=True, env=env, timeout=timeout)


def test_heuristic_seed_passes_smoke_within_each_questions_budget(fixture_data, tmp_path):
    metrics = evaluate(SEEDS / "explore-eqa-heuristic", "smoke", workers=1, use_cache=False, progress=False,
                       out_dir=tmp_path)
    assert metrics["complete"] and metrics["n"] == 5 and metrics["agent_errors"] == 0
    budgets = {e["episode_id"]: e["max_steps"] for e in load_executor("eqa").episodes("smoke")}
    for ep in metrics["episodes"]:
        m = ep["metrics"]
        assert ep["steps"] <= budgets[ep["episode_id"]] == m["budget"] and ep["model_calls"] == 0
        assert m["answered"] and m["answer"] in "ABCD" and ep["success"] == (m["answer"] == m["truth"])
        assert m[f"accuracy_{m['type']}"] == m["accuracy"] and m["backend"] == "graph"
        assert m.get("accuracy_without_room") == (None if m["type"] == "room_location" else m["accuracy"])
        if not m["stopped"]:
            assert ep["termination"] == "max_steps" and ep["steps"] == budgets[ep["episode_id"]]
    assert set(metrics["secondary"]) >= {"accuracy_existence", "accuracy_count", "accuracy_room_location",
                                         "accuracy_identification", "accuracy_without_room", "steps", "path_length"}
    scored = [ep["metrics"]["accuracy"] for ep in metrics["episodes"] if ep["metrics"]["type"] != "room_location"]
    assert metrics["secondary"]["accuracy_without_room"] == pytest.approx(sum(scored) / len(scored))


def test_oracle_reads_the_answer_on_the_smoke_tier(fixture_data):
    ex = load_executor("eqa")
    results = [ex.oracle(e) for e in ex.episodes("smoke")]
    assert all(r["success"] and r["metrics"]["accuracy"] == 1.0 for r in results)
    assert all(r["steps"] <= e["max_steps"] for r, e in zip(results, ex.episodes("smoke")))


@needs_full_eqa_data
def test_oracle_reaches_the_ceiling_on_the_search_tier():
    ex = load_executor("eqa")
    results = [ex.oracle(e) for e in ex.episodes("search")]
    assert len(results) == 100 and all(r["success"] for r in results)


def test_model_seed_runs_through_the_openai_client_on_a_loopback_server(fixture_data, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "loopback")
    with LoopbackServer(scripted_vlm, reply_model=SCRIPTED_MODEL) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
        metrics = evaluate(SEEDS / "explore-eqa", "smoke", workers=1, use_cache=False, progress=False,
                           out_dir=tmp_path)
        requests = list(server.requests)
    assert metrics["complete"] and metrics["agent_errors"] == 0 and metrics["model"]["calls"] == len(requests) > 4
    assert all(r["model"] == "gpt-5-mini" for r in requests)
    tasks = {r["messages"][-1]["content"].splitlines()[0] for r in requests}
    assert tasks == {"Task: answer", "Task: explore"}
    log = [json.loads(line) for line in (tmp_path / metrics["episodes"][0]["log"]).read_text().splitlines()]
    answers = [r for r in log if r.get("node") == "answer"]
    assert answers and all("unparsed" not in (r.get("self") or {}) for r in answers)
    assert all(ep["metrics"]["answered"] for ep in metrics["episodes"])


def test_model_seed_without_a_key_stops_before_any_rollout(fixture_data, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ARCHITECT_MODEL_MODE", raising=False)
    with pytest.raises(UserError) as err:
        evaluate(SEEDS / "explore-eqa", "smoke", workers=1, use_cache=False, progress=False)
    assert "OPENAI_API_KEY" in err.value.message and "openai-gpt5-mini" in err.value.message


def test_conformal_threshold_is_the_finite_sample_quantile():
    scores = [0.1 * i for i in range(1, 10)]                               # n = 9
    assert conformal_threshold(scores, 0.1) == pytest.approx((0.9, 0.1))   # rank ceil(10 x 0.9) = 9
    assert conformal_threshold(scores, 0.5) == pytest.approx((0.5, 0.5))   # rank 5
    assert conformal_threshold(scores[:3], 0.1) == (1.0, 0.0)              # rank 4 > 3: everything in the set
    with pytest.raises(UserError):
        conformal_threshold([], 0.1)


def test_calibration_runs_to_the_budget_and_reports_the_threshold(fixture_data):
    result = calibrate(SEEDS / "explore-eqa-heuristic", tier="smoke", epsilon=0.2, workers=1, progress=False)
    assert result["n"] == 5 and result["stop_nodes"] == ["stop"] and result["threshold"] == 1 - result["q_hat"]
    assert 0 <= result["threshold"] <= 1
    with pytest.raises(UserError, match="no eqa.ConfidenceStop"):
        calibrate(SEEDS / "smartway-heuristic", tier="smoke")


def test_calibrate_command_prints_one_json_object(fixture_data, tmp_path):
    done = subprocess.run(["python", "-m", "executors.eqa.calibrate", str(tmp_path / "nowhere")],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert done.returncode != 0 and "Traceback" not in done.stderr and json.loads(done.stdout)["ok"] is False


@needs_full_eqa_data
def test_init_random_commits_iteration_zero(tmp_path):
    env = dict(os.environ, ARCHITECT_RUNS_DIR=str(tmp_path / "runs"))
    done = architect("init", "random", "explore-eqa-heuristic", "--run-id", "e", "--smoke-episodes", "2",
                     "--eval-episodes", "3", "--json", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    run = tmp_path / "runs" / "e"
    log = subprocess.run(["git", "-C", str(run), "log", "--oneline"], capture_output=True, text=True).stdout
    assert "iteration 0" in log
    executor = json.loads((run / "manifest.json").read_text())["provenance"]["executor"]
    assert executor["question_set_released"] is True and executor["question_set_version"] == 1
    assert set(executor["data_sha256"]) == {"r2r", "reverie", "mp3d-regions"}


def test_architect_executors_lists_both_navigation_ports():
    done = architect("executors", "--json")
    assert done.returncode == 0
    listed = {e["name"]: e for e in json.loads(done.stdout)["executors"]}
    assert set(listed["eqa"]["seeds"]) == {"explore-eqa", "explore-eqa-heuristic"}
    assert set(listed["smartway"]["seeds"]) == {"smartway", "smartway-heuristic"}
    assert {d["name"] for d in listed["eqa"]["data"]} == {"r2r", "reverie", "mp3d-regions"}


def test_an_episode_that_errs_counts_as_a_wrong_answer():
    from harness.evaluation.records import summarize

    right = {"success": True, "infra_error": None, "error": None, "termination": "success", "metrics":
             {"accuracy": 1.0, "accuracy_count": 1.0}, "model_calls": 0, "input_tokens": 0, "output_tokens": 0,
             "cost_usd": 0.0}
    crashed = dict(right, success=False, error="node 'x' raised in reset", termination="node_error", metrics={})
    summary = summarize([right, crashed], "accuracy", ["accuracy_count"])
    assert summary["primary"]["mean"] == 0.5 and summary["primary"]["n"] == 2
    assert summary["secondary"]["accuracy_count"] == 1.0                 # per type: over the answered episodes

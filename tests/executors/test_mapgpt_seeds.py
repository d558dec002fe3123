"""The mapgpt seeds end to end: evaluation, the recorded cassette, the tiers,
the oracle, `architect init` with and without a model, and the random loop."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from mapgpt_testkit import CASSETTE, CASSETTE_NOTE, EXPECTED, FIXTURE, SEEDS, full_data_dir, needs_full_data

from executors import load_executor
from executors.mapgpt.stand_ins import PLANNER_MODEL as SCRIPTED_MODEL, scripted_mapgpt_planner
from harness.evaluation import evaluate
from harness.models.loopback import LoopbackServer
from harness.schemas import validate_instance


@pytest.fixture
def fixture_data(monkeypatch):
    monkeypatch.setenv("ARCHITECT_DATA_DIR", str(FIXTURE))


def architect(*args, env=None, timeout=300):
    return subprocess.run(["architect", *args], capture_output=True, text=True, env=env, timeout=timeout)


def test_heuristic_seed_passes_smoke_on_the_fixture(fixture_data, tmp_path):
    metrics = evaluate(SEEDS / "mapgpt-heuristic", "smoke", workers=1, use_cache=False, progress=False,
                       out_dir=tmp_path)
    assert metrics["complete"] and metrics["n"] == 5 and metrics["agent_errors"] == 0
    for ep in metrics["episodes"]:
        m = ep["metrics"]
        assert 1 <= m["decisions"] <= 15 and m["backend"] == "graph" and len(m["data_sha256"]) == 64
        assert m["trajectory"][0][0] and ep["model_calls"] == 0
        assert 0 <= m["spl"] <= float(ep["success"]) + 1e-9 and m["nav_error"] >= 0
        assert ep["success"] == (m["nav_error"] < 3.0)
    assert set(metrics["secondary"]) >= {"spl", "ndtw", "sdtw", "oracle_success", "nav_error", "trajectory_length"}


def test_cassette_is_labelled_as_a_scripted_planner():
    for line in CASSETTE.read_text().splitlines():
        entry = json.loads(line)
        assert validate_instance("cassette_entry", entry) == []
        assert entry["note"] == CASSETTE_NOTE and "no real LLM" in entry["note"]
        assert entry["response"]["model"] == SCRIPTED_MODEL and entry["request"]["model"] == "gpt-5-mini"
        assert entry["request"]["temperature"] == 1.0


def test_faithful_seed_replays_its_smoke_tier_offline(fixture_data, monkeypatch, tmp_path):
    monkeypatch.setenv("ARCHITECT_MODEL_MODE", "replay")
    monkeypatch.setenv("ARCHITECT_CASSETTE", str(CASSETTE))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    metrics = evaluate(SEEDS / "mapgpt", "smoke", workers=1, use_cache=False, progress=False, out_dir=tmp_path)
    expected = json.loads(EXPECTED.read_text())["episodes"]
    got = [dict({k: ep.get(k) for k in ("episode_id", "success", "steps", "termination", "model_calls",
                                        "input_tokens", "output_tokens")},
                **{k: ep["metrics"].get(k) for k in ("decisions", "stopped", "nav_error", "spl", "ndtw")})
           for ep in metrics["episodes"]]
    assert got == expected
    assert metrics["model"]["calls"] == sum(e["model_calls"] for e in expected) > 0
    log = [json.loads(line) for line in (tmp_path / metrics["episodes"][0]["log"]).read_text().splitlines()]
    planner = [r for r in log if r.get("node") == "planner"]
    assert planner and all(call["replayed"] for r in planner for call in r["self"]["calls"])
    parsed = [r for r in log if r.get("node") == "parser"]
    assert parsed[0]["self"]["valid"] is False                        # step 0: no Action line -> first place


def test_scripted_planner_stops_through_both_routes():
    prompt = ("Instruction: go to the red door\nTrajectory: Place 0\nAction options (step 4):\n"
              "A. stop\nB. turn left to Place 1 — a door")
    reply = scripted_mapgpt_planner("openai", None, [{"role": "user", "content": prompt}], {})
    assert reply.endswith("Action: Z")                                # odd word count: invalid letter
    even = prompt.replace("red door", "red door now")
    assert scripted_mapgpt_planner("openai", None, [{"role": "user", "content": even}], {}).endswith("Action: A")


def test_init_without_a_key_stops_before_any_rollout(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["ARCHITECT_RUNS_DIR"] = str(tmp_path / "runs")
    done = architect("init", "kdloop", "mapgpt", "--json", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    error = json.loads(done.stdout)["error"]
    assert "openai-gpt5-mini" in error and "OPENAI_API_KEY" in error
    assert not any((tmp_path / "runs").glob("*/manifest.json"))
    assert not any((tmp_path / "runs").glob("*/iterations"))


@needs_full_data
def test_init_with_the_loopback_model_commits_iteration_zero(tmp_path):
    env = dict(os.environ, ARCHITECT_RUNS_DIR=str(tmp_path / "runs"), OPENAI_API_KEY="loopback")
    with LoopbackServer(scripted_mapgpt_planner, reply_model=SCRIPTED_MODEL) as server:
        env["OPENAI_BASE_URL"] = server.openai_url
        done = architect("init", "kdloop", "mapgpt", "--run-id", "m", "--smoke-episodes", "2",
                     "--eval-episodes", "2", "--json", env=env)
        calls = len(server.requests)
    assert done.returncode == 0, done.stderr[-2000:]
    run = tmp_path / "runs" / "m"
    log = subprocess.run(["git", "-C", str(run), "log", "--oneline"], capture_output=True, text=True).stdout
    assert "iteration 0" in log and calls > 0
    metrics = json.loads((run / "iterations" / "0" / "eval" / "metrics.json").read_text())
    assert metrics["n"] == 2 and metrics["model"]["calls"] > 0 and metrics["model"]["input_tokens"] > 0


@needs_full_data
def test_tiers_are_the_seeded_draw_and_the_holdout_is_sealed():
    from executors.mp3d.data_r2r import Dataset
    from executors.mapgpt.draw_tiers import draw

    ex = load_executor("mapgpt")
    drawn = draw(Dataset(full_data_dir()))
    for tier in ("smoke", "search", "holdout"):
        assert [{k: e[k] for k in ("split", "instr_id")} for e in ex.episodes(tier)] == drawn[tier]
    assert len(ex.episodes("search")) == 100 and ex.sealed == {"holdout", "shaper_test_c1", "shaper_test_c2"}
    ds = Dataset(full_data_dir())
    scans = {ds.episode(e["split"], e["instr_id"])["scan"] for e in ex.episodes("search")}
    pool = {i["scan"] for i in ds.split("train").values()} | {i["scan"] for i in ds.split("val_unseen").values()}
    assert scans <= pool and len(pool) == 72


@needs_full_data
def test_oracle_scores_perfectly_on_the_search_tier():
    ex = load_executor("mapgpt")
    results = [ex.oracle(episode) for episode in ex.episodes("search")]
    assert len(results) == 100 and all(r["success"] for r in results)
    assert sum(r["metrics"]["spl"] for r in results) / 100 == pytest.approx(1.0)
    assert sum(r["metrics"]["ndtw"] for r in results) / 100 > 0.99


@needs_full_data
def test_random_loop_on_the_heuristic_seed_commits_four_iterations(tmp_path):
    env = dict(os.environ, ARCHITECT_RUNS_DIR=str(tmp_path / "runs"))
    done = architect("loop", "random", "mapgpt-heuristic", "--iterations", "3", "--run-id", "r",
                     "--smoke-episodes", "1", "--eval-episodes", "2", "--json", env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["stop_reason"] in ("iterations_done", "max_iterations")
    assert len([r for r in summary["rows"] if r["status"] == "committed"]) == 4
    log = subprocess.run(["git", "-C", str(tmp_path / "runs" / "r"), "log", "--oneline"],
                         capture_output=True, text=True).stdout
    assert sum("iteration" in line for line in log.splitlines()) >= 4

"""The babyai-llm seed: smoke tier replayed offline from the cassette shipped in tests/cassettes."""

import json
import shutil

import pytest

from harness import PROJECT_ROOT
from harness.evaluation import evaluate
from harness.schemas import validate_instance

SEED = PROJECT_ROOT / "seeds" / "babyai-llm"
CASSETTE = PROJECT_ROOT / "tests" / "cassettes" / "babyai_llm_smoke.jsonl"
EXPECTED = json.loads((PROJECT_ROOT / "tests" / "cassettes" / "babyai_llm_smoke.expected.json").read_text())
KEYS = ("episode_id", "success", "steps", "termination", "model_calls", "input_tokens", "output_tokens")


@pytest.fixture
def replay_env(monkeypatch, tmp_path):
    monkeypatch.setenv("ARCHITECT_MODEL_MODE", "replay")
    monkeypatch.setenv("ARCHITECT_CASSETTE", str(CASSETTE))
    monkeypatch.setenv("ARCHITECT_CACHE_DIR", str(tmp_path / "cache"))


def _summary(metrics):
    return [{k: ep.get(k) for k in KEYS} for ep in metrics["episodes"]]


def test_shipped_cassette_is_valid_and_says_who_answered():
    lines = CASSETTE.read_text().splitlines()
    assert lines
    for line in lines:
        entry = json.loads(line)
        assert validate_instance("cassette_entry", entry) == []
        assert "no real LLM" in entry["note"]
        assert entry["response"]["model"] == "scripted-babyai-planner"


def test_smoke_tier_replays_offline_with_the_recorded_results(replay_env, tmp_path):
    metrics = evaluate(SEED, "smoke", workers=2, use_cache=False, progress=False, out_dir=tmp_path / "out")
    assert _summary(metrics) == EXPECTED["episodes"]
    assert all(ep["error"] is None for ep in metrics["episodes"])
    assert sum(ep["model_calls"] for ep in metrics["episodes"]) == sum(e["model_calls"] for e in EXPECTED["episodes"])
    firing = [json.loads(line) for line in (tmp_path / "out" / "episodes").glob("*.jsonl").__next__().open()]
    planner = [r for r in firing if r.get("node") == "planner"]
    assert planner and all(call["replayed"] for r in planner for call in r["self"]["calls"])


def test_replay_profile_needs_no_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("ARCHITECT_MODEL_MODE", raising=False)
    monkeypatch.delenv("ARCHITECT_CASSETTE", raising=False)
    monkeypatch.setenv("ARCHITECT_CACHE_DIR", str(tmp_path / "cache"))
    candidate = tmp_path / "candidate"
    shutil.copytree(SEED, candidate)
    graph = json.loads((candidate / "graph.json").read_text())
    graph["model_profile"] = {"name": "replay", "path": "profiles/replay.yaml"}
    (candidate / "graph.json").write_text(json.dumps(graph))
    metrics = evaluate(candidate, "smoke", episodes=2, workers=1, use_cache=False, progress=False)
    ran = {r["episode_id"] for r in metrics["episodes"]}  # 2 episodes, round-robin over the smoke levels
    assert len(ran) == 2 and _summary(metrics) == [e for e in EXPECTED["episodes"] if e["episode_id"] in ran]


def test_an_edited_skill_misses_the_cassette_with_a_clear_error(replay_env, tmp_path):
    candidate = tmp_path / "candidate"
    shutil.copytree(SEED, candidate)
    (candidate / "skill.md").write_text("Always go to the nearest door first.\n")
    metrics = evaluate(candidate, "smoke", episodes=1, workers=1, use_cache=False, progress=False)
    episode = metrics["episodes"][0]
    assert episode["termination"] == "node_error" and not episode["success"]
    assert "CassetteMiss" in episode["error"] and "has no response for request" in episode["error"]
    assert "babyai_llm_smoke.jsonl" in episode["error"]


def test_a_hostile_context_harness_fails_the_episode_not_the_process(replay_env, tmp_path):
    candidate = tmp_path / "candidate"
    shutil.copytree(SEED, candidate)
    (candidate / "build_context.py").write_text("def build_context(history):\n    return open('/etc/passwd').read()\n")
    metrics = evaluate(candidate, "smoke", episodes=1, workers=1, use_cache=False, progress=False)
    episode = metrics["episodes"][0]
    assert episode["termination"] == "node_error"
    assert "'open' is not allowed" in episode["error"]


def test_rerecording_reproduces_the_shipped_cassette(tmp_path, monkeypatch):
    """The shipped cassette is exactly what the recording script makes (scripted planner, loopback server)."""
    import importlib.util

    monkeypatch.setenv("ARCHITECT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ARCHITECT_MODEL_MODE", raising=False)
    monkeypatch.delenv("ARCHITECT_CASSETTE", raising=False)
    spec = importlib.util.spec_from_file_location(
        "record_babyai_llm_smoke", PROJECT_ROOT / "tests" / "cassettes" / "record_babyai_llm_smoke.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    summary = module.record(cassette=tmp_path / "c.jsonl", expected=tmp_path / "e.json", workers=1)
    assert summary["episodes"] == EXPECTED["episodes"]
    assert (tmp_path / "c.jsonl").read_text() == CASSETTE.read_text()

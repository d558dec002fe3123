"""A corpus of hostile node files (tests/sandbox/hostile/*.py), each a candidate
node `candidate.Spy` wired to the BabyAI simulator's observation, run through
validation and smoke episodes: none may obtain what it must not see (a
successful escape returns text starting with LEAK), write a file, change the
episode it is evaluated on, leave an episode unscored or stop the run.

Each file's first line says what it expects: `refused` (validation reports a
nodeset_error naming the file) or `contained` (it validates; whatever it does
when it runs ends at worst as that candidate's failed episode)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness import PROJECT_ROOT
from harness.canvas.runtime import TERMINATIONS, GraphRunner
from harness.canvas.validate import validate_graph

HOSTILE = Path(__file__).parent / "hostile"
CORPUS = sorted(HOSTILE.glob("*.py"))
SEED = PROJECT_ROOT / "seeds" / "babyai"
CANARY = Path("/tmp/architect-hostile-canary")
EPISODES = [{"level": "BabyAI-GoToLocal-v0", "seed": 11, "episode_id": "GoToLocal:11"},
            {"level": "BabyAI-OpenDoorLoc-v0", "seed": 4, "episode_id": "OpenDoorLoc:4"}]


@pytest.fixture(autouse=True)
def _short_calls(monkeypatch):
    monkeypatch.setenv("ARCHITECT_SANDBOX_CALL_SECONDS", "3")


def _candidate(tmp_path: Path, source: str) -> tuple[Path, dict]:
    candidate = tmp_path / "candidate"
    shutil.copytree(SEED, candidate)
    (candidate / "nodeset").mkdir(exist_ok=True)
    (candidate / "nodeset" / "spy.py").write_text(source)
    graph = json.loads((candidate / "graph.json").read_text())
    graph["nodes"]["spy"] = {"type": "candidate.Spy", "config": {}}
    graph["edges"].append({"from": "sim.observation", "to": "spy.observation"})
    return candidate, graph


def _outcome(result: dict) -> tuple:
    return result["success"], result["reward"], result["steps"]


@pytest.fixture(scope="module")
def reference():
    graph = json.loads((SEED / "graph.json").read_text())
    with GraphRunner(graph, candidate_dir=SEED) as runner:
        return [_outcome(runner.run_episode(dict(e))) for e in EPISODES]


def test_the_corpus_holds_every_kind():
    assert len(CORPUS) >= 60
    expects = {path.read_text().splitlines()[0] for path in CORPUS}
    assert expects == {"# expect: refused", "# expect: contained"}


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_a_hostile_node_file_gains_nothing_and_the_episodes_are_scored(path, tmp_path, reference):
    CANARY.unlink(missing_ok=True)
    source = path.read_text()
    candidate, graph = _candidate(tmp_path, source)
    errors = [p for p in validate_graph(graph, candidate_dir=candidate) if p.severity == "error"]
    if source.startswith("# expect: refused"):
        assert any(p.code == "nodeset_error" and "nodeset/" in p.message for p in errors), \
            [p.message for p in errors]
        return
    assert errors == [], [p.message for p in errors]
    seen = []
    with GraphRunner(graph, candidate_dir=candidate) as runner:
        spy = runner.nodes["spy"]
        step = spy.step

        def recording(inputs, ctx):
            out = step(inputs, ctx)
            seen.append(out)
            return out

        spy.step = recording
        episodes = [dict(e) for e in EPISODES]
        results = [runner.run_episode(e) for e in episodes]
    assert episodes == EPISODES  # the runner's episode descriptions are untouched
    for result, expected in zip(results, reference):
        assert result["termination"] in TERMINATIONS and isinstance(result["success"], bool)
        if result["error"] is None:  # the spy ran to the end: the episode is the one it would have been
            assert _outcome(result) == expected
        else:
            assert not result["success"]
    assert not any("LEAK" in str(out)[:200] for out in seen)
    assert not CANARY.exists() and not (candidate / "pwned.txt").exists()


def test_what_the_candidate_causes_has_its_own_termination_reason(tmp_path, reference):
    expected = {"hang_in_step": "candidate_timeout", "hang_in_big_int": "candidate_timeout",
                "unstorable_output": "candidate_unstorable", "unstorable_self_log": "candidate_unstorable",
                "deeply_nested_output": "candidate_unstorable", "huge_output": "candidate_unstorable",
                "huge_self_log": "candidate_log_too_large", "system_exit": "node_error",
                "memory_bomb": "node_error"}
    from harness.canvas.episode_log import EpisodeLog

    for name, reason in expected.items():
        candidate, graph = _candidate(tmp_path / name, (HOSTILE / f"{name}.py").read_text())
        with GraphRunner(graph, candidate_dir=candidate) as runner:
            first = runner.run_episode(dict(EPISODES[0]), EpisodeLog(enabled=True))
            second = runner.run_episode(dict(EPISODES[1]), EpisodeLog(enabled=True))
        assert (name, first["termination"], second["termination"]) == (name, reason, reason), first["error"]
        assert not first["success"] and first["error"]


@pytest.mark.parametrize("name", ["hang_in_step", "memory_bomb", "unstorable_output"])
def test_an_evaluation_of_a_misbehaving_candidate_completes_with_every_episode_scored(name, tmp_path, monkeypatch):
    """A hang, a memory bomb or an unstorable output is the candidate's failed episode, never an
    infrastructure failure: the evaluation completes and scores every episode."""
    from harness.evaluation import evaluate

    monkeypatch.setenv("ARCHITECT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ARCHITECT_RESULTS_DIR", str(tmp_path / "results"))
    candidate, graph = _candidate(tmp_path, (HOSTILE / f"{name}.py").read_text())
    (candidate / "graph.json").write_text(json.dumps(graph))
    metrics = evaluate(candidate, "smoke", episodes=2, workers=1, use_cache=False, progress=False)
    assert metrics["complete"] and metrics.get("infra_failures", 0) == 0
    assert len(metrics["episodes"]) == 2
    assert all(not r["success"] and not r.get("infra_error") for r in metrics["episodes"])
    assert metrics["primary"]["mean"] == 0.0

"""A corpus of hostile node files (tests/sandbox/hostile/*.py), each a candidate
node `candidate.Spy` wired to the BabyAI simulator's observation, run through
validation and smoke episodes: none may obtain what it must not see (a
successful escape returns text starting with LEAK), write a file, change the
episode it is evaluated on, leave an episode unscored or stop the run.

Each file's first line says what it expects: `refused` (validation reports a
nodeset_error naming the file) or `contained` (it validates; whatever it does
when it runs ends at worst as that candidate's failed episode).

The same corpus runs against every executor (`hostile_kit.CASES`): on each, every
file is validated (all in one candidate: one sandbox load per executor) and each
privileged simulator output is refused as an input of a candidate node; the
contained files then run real episodes. BabyAI runs the whole corpus; the other
executors run the kinds whose outcome can depend on the simulator
(`RUN_EVERYWHERE`; `ARCHITECT_HOSTILE_MATRIX=full` runs every contained file on
every executor, which takes 15 minutes or more on 2 cores)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hostile_kit import CASES, CORPUS, HOSTILE, adapt, candidate, episodes, with_spy

from harness import PROJECT_ROOT
from harness.canvas.episode_log import EpisodeLog
from harness.canvas.runtime import TERMINATIONS, GraphRunner
from harness.canvas.validate import validate_graph

SEED = PROJECT_ROOT / "seeds" / "babyai"
CANARY = Path("/tmp/architect-hostile-canary")
EPISODES = [{"level": "BabyAI-GoToLocal-v0", "seed": 11, "episode_id": "GoToLocal:11"},
            {"level": "BabyAI-OpenDoorLoc-v0", "seed": 4, "episode_id": "OpenDoorLoc:4"}]


@pytest.fixture(autouse=True)
def _short_calls(monkeypatch):
    # each hang waits this long per call; the slowest call that should succeed, loading the whole
    # corpus in one sandbox, takes about 0.2 s on 2 busy cores
    monkeypatch.setenv("ARCHITECT_SANDBOX_CALL_SECONDS", "1.5")


def _candidate(tmp_path: Path, source: str) -> tuple[Path, dict]:
    folder, graph = candidate(tmp_path / "candidate", CASES["babyai"], {"spy": source})
    return folder, with_spy(graph, CASES["babyai"])


def _outcome(result: dict) -> tuple:
    return result["success"], result["reward"], result["steps"]


def _run_spied(graph: dict, folder: Path, given: list[dict]) -> tuple[list[dict], list]:
    """Each episode's result, and every output the spy returned."""
    seen = []
    with GraphRunner(graph, candidate_dir=folder) as runner:
        spy = runner.nodes["spy"]
        step = spy.step

        def recording(inputs, ctx):
            out = step(inputs, ctx)
            seen.append(out)
            return out

        spy.step = recording
        return [runner.run_episode(e, EpisodeLog(enabled=True)) for e in given], seen


def _assert_gained_nothing(results: list[dict], reference: list[tuple], seen: list, folder: Path) -> None:
    for result, expected in zip(results, reference):
        assert result["termination"] in TERMINATIONS and isinstance(result["success"], bool)
        if result["error"] is None:  # the spy ran to the end: the episode is the one it would have been
            assert _outcome(result) == expected
        else:
            assert not result["success"]
    assert not any("LEAK" in str(out)[:200] for out in seen)
    assert not CANARY.exists() and not (folder / "pwned.txt").exists()


@pytest.fixture(scope="module")
def reference():
    graph = json.loads((SEED / "graph.json").read_text())
    with GraphRunner(graph, candidate_dir=SEED) as runner:
        return [_outcome(runner.run_episode(dict(e))) for e in EPISODES]


def test_the_corpus_holds_every_kind():
    assert len(CORPUS) >= 60
    expects = {path.read_text().splitlines()[0] for path in CORPUS}
    assert expects == {"# expect: refused", "# expect: contained"}


# what the candidate causes has its own termination reason, in both episodes (logs on: some kinds misbehave in them)
TERMINATION = {"hang_in_step": "candidate_timeout", "hang_in_big_int": "candidate_timeout",
               "unstorable_output": "candidate_unstorable", "unstorable_self_log": "candidate_unstorable",
               "deeply_nested_output": "candidate_unstorable", "huge_output": "candidate_unstorable",
               "huge_self_log": "candidate_log_too_large", "system_exit": "node_error",
               "memory_bomb": "node_error", "hang_in_setup": "candidate_timeout",
               "regex_backtracking": "candidate_timeout", "huge_int_output": "candidate_unstorable"}


def test_the_termination_reasons_name_contained_files_of_the_corpus():
    assert set(TERMINATION) <= {p.stem for p in CORPUS if p.read_text().startswith("# expect: contained")}


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
    given = [dict(e) for e in EPISODES]
    results, seen = _run_spied(graph, candidate, given)
    assert given == EPISODES  # the runner's episode descriptions are untouched
    _assert_gained_nothing(results, reference, seen, candidate)
    if path.stem in TERMINATION:
        assert [r["termination"] for r in results] == [TERMINATION[path.stem]] * len(EPISODES), results[0]["error"]
        assert all(not r["success"] and r["error"] for r in results)


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


# -- every executor --------------------------------------------------------------------------------

TOP_LEVEL = ("hang_at_top_level", "top_level_system_exit")  # misbehave while loading: each alone
# the kinds whose outcome can depend on the simulator: what it hands the node, the episode, the executor's
# helper module, the context, a hang mid-episode, outputs and the candidate folder; the rest of the corpus tests
# the sandbox process itself, the same on every executor (BabyAI runs all of it)
RUN_EVERYWHERE = ("mutate_inputs", "mutate_episode", "mutate_helper_module", "context_private", "hang_in_step",
                  "unstorable_output", "write_candidate_file", "read_outside_candidate")
RUN_ON_LIBERO = ("mutate_inputs", "mutate_episode")  # its episodes take seconds each


def _expects(path: Path) -> str:
    return path.read_text().splitlines()[0].removeprefix("# expect: ")


def _type_name(path: Path) -> str:
    return "Spy_" + path.stem


def _runtime_cases() -> list[tuple[str, Path]]:
    full = os.environ.get("ARCHITECT_HOSTILE_MATRIX") == "full"
    out = []
    for name in CASES:
        if name == "babyai":
            continue  # the whole corpus runs on BabyAI above
        kinds = RUN_ON_LIBERO if name == "libero" else RUN_EVERYWHERE
        out += [(name, p) for p in CORPUS if _expects(p) == "contained" and (full or p.stem in kinds)]
    return out


def test_the_kinds_run_everywhere_are_contained_files_of_the_corpus():
    contained = {p.stem for p in CORPUS if _expects(p) == "contained"}
    assert set(RUN_EVERYWHERE) <= contained and set(RUN_ON_LIBERO) <= contained


@pytest.mark.parametrize("executor", list(CASES))
def test_on_every_executor_each_file_is_refused_or_validates_and_privileged_outputs_stay_out(executor, tmp_path):
    case = CASES[executor]
    batch = [p for p in CORPUS if p.stem not in TOP_LEVEL]
    folder, graph = candidate(tmp_path / "c", case, {p.stem: adapt(p.read_text(), case, _type_name(p)) for p in batch})
    for path in batch:
        if _expects(path) == "contained":
            graph = with_spy(graph, case, node=path.stem, type_name=_type_name(path))
    errors = [p for p in validate_graph(graph, candidate_dir=folder) if p.severity == "error"]
    refused = {p.stem for p in batch if any(e.code == "nodeset_error" and f"nodeset/{p.stem}.py" in e.message
                                            for e in errors)}
    assert refused == {p.stem for p in batch if _expects(p) == "refused"}
    assert all(e.code == "nodeset_error" for e in errors), [e.message for e in errors if e.code != "nodeset_error"]
    spy = next(p for p in batch if _expects(p) == "contained")
    for port in case.privileged:
        wired = with_spy(graph, case, node="peek", type_name=_type_name(spy), port=port)
        codes = {e.code for e in validate_graph(wired, candidate_dir=folder) if e.node == "peek"}
        assert "privileged_to_candidate" in codes, (port, codes)


@pytest.mark.parametrize("executor", list(CASES))
@pytest.mark.parametrize("name", TOP_LEVEL)
def test_on_every_executor_a_file_misbehaving_while_it_loads_is_refused(executor, name, tmp_path):
    case = CASES[executor]
    folder, graph = candidate(tmp_path / "c", case, {name: adapt((HOSTILE / f"{name}.py").read_text(), case)})
    errors = [p for p in validate_graph(with_spy(graph, case), candidate_dir=folder) if p.severity == "error"]
    assert any(p.code == "nodeset_error" and f"nodeset/{name}.py" in p.message for p in errors), errors


_references: dict[str, list[tuple]] = {}


def _reference(executor: str) -> list[tuple]:
    if executor not in _references:
        case = CASES[executor]
        graph = json.loads((PROJECT_ROOT / "seeds" / case.seed / "graph.json").read_text())
        with GraphRunner(graph, candidate_dir=PROJECT_ROOT / "seeds" / case.seed) as runner:
            _references[executor] = [_outcome(runner.run_episode(e)) for e in episodes(case)]
    return _references[executor]


@pytest.mark.parametrize("executor, path", _runtime_cases(), ids=[f"{e}-{p.stem}" for e, p in _runtime_cases()])
def test_on_every_executor_a_contained_hostile_node_gains_nothing_and_the_episode_is_scored(executor, path, tmp_path):
    case = CASES[executor]
    CANARY.unlink(missing_ok=True)
    expected = _reference(executor)
    folder, graph = candidate(tmp_path / "c", case, {"spy": adapt(path.read_text(), case)})
    given = episodes(case)
    results, seen = _run_spied(with_spy(graph, case), folder, given)
    assert given == episodes(case)  # the runner's episode descriptions are untouched
    _assert_gained_nothing(results, expected, seen, folder)

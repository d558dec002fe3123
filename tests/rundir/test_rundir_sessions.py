"""Fresh context per iteration (`architect drive` + a scripted stand-in agent),
recording why a run stopped (`architect end`), spend caps, dry-run, format
version, and the no-op check."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rundir_kit import SMALL, cli, git

from harness.cli import main
from harness.rundir import state
from harness.rundir.layout import RunPaths

STAND_IN = Path(__file__).with_name("iterate_stand_in.py")


def test_drive_runs_one_fresh_session_per_iteration_until_the_cap(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    agent = f"{shlex.quote(sys.executable)} {shlex.quote(str(STAND_IN))}"
    out = cli("drive", "random", "babyai", "--agent-command", agent, "--runs-dir", str(tmp_path / "runs"))
    run = tmp_path / "runs" / "random-babyai"
    rows = [json.loads(line) for line in (run / "ledger.jsonl").read_text().splitlines()]
    committed = [r["iteration"] for r in rows if r["status"] == "committed"]
    assert committed == [0, 1, 2]
    assert len(out["sessions"]) == len(rows) - 1  # one attempt per session, the first also created the run
    assert out["stop_reason"].startswith("max_iterations: 2 of 2")
    final = state.read(RunPaths(run))
    assert final["status"] == "stopped" and final["stop_reason"] == out["stop_reason"]
    assert git(run, "status", "--porcelain") == ""
    assert out["next"] == f"architect certify {run} --dry-run --json"  # drive leaves certifying to its own command


def test_end_records_the_stop_file_text_and_status_shows_spend(run_dir: Path):
    runs = str(run_dir.parent)
    idle = cli("end", run_dir.name, "--runs-dir", runs)
    assert idle["stopped"] is False and state.read(RunPaths(run_dir))["status"] == "ready"
    (run_dir / "STOP").write_text("budget meeting: pause the search\n")
    status = cli("status", run_dir.name, "--runs-dir", runs)
    assert status["stop"]["code"] == "stop_file" and status["stop_file_text"] == "budget meeting: pause the search"
    assert status["spent"] == {"cost_usd": 0.0, "tokens": 0}
    ended = cli("end", run_dir.name, "--runs-dir", runs)
    assert ended["stop_reason"] == "stop_file: budget meeting: pause the search"
    assert not (run_dir / "STOP").exists() and git(run_dir, "status", "--porcelain") == ""
    assert state.read(RunPaths(run_dir))["status"] == "stopped"
    verdict = cli("end", run_dir.name, "--reason", "aflow: converged", "--runs-dir", runs)
    assert verdict["stop_reason"] == "aflow: converged"


def test_spend_caps_stop_the_loop_between_iterations(run_dir: Path):
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["caps"]["max_tokens"] = 0
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    out = cli("loop", "random", "babyai", "--run-id", run_dir.name, "--runs-dir", str(run_dir.parent), "--resume")
    assert out["stop_reason"] == "max_tokens" and [r["iteration"] for r in out["rows"]] == [0]


def test_dry_run_prints_one_iteration_without_running(tmp_path):
    out = cli("init", "random", "babyai-llm", "--dry-run", "--smoke-episodes", "2", "--eval-episodes", "3",
              "--runs-dir", str(tmp_path))
    assert out["dry_run"] and out["episodes"] == 5 and out["tiers"]["performance"]["episodes"] == 3
    graph = json.loads((Path(__file__).parents[2] / "seeds/babyai-llm/graph.json").read_text())
    assert out["model_calls_max"] == 5 * graph["budgets"]["model_calls"]
    assert out["tokens_max"] == 5 * graph["budgets"]["tokens"] and out["cost_usd_max"] is not None
    assert list(tmp_path.iterdir()) == []  # nothing was created
    loop = cli("loop", "random", "babyai", "--dry-run", "--runs-dir", str(tmp_path))
    assert loop["model_calls_max"] == 0 and loop["cost_usd_max"] == 0.0


def test_dry_run_lists_only_episode_ids_and_says_how_many_it_shows(tmp_path):
    from harness.executor_api import load_executor

    out = cli("init", "random", "babyai", "--dry-run", "--smoke-episodes", "2", "--eval-episodes", "7",
              "--runs-dir", str(tmp_path))
    performance, smoke = out["tiers"]["performance"], out["tiers"]["smoke"]
    tier = [e["episode_id"] for e in load_executor("babyai").episodes("search")]
    assert performance["episodes"] == 7 and performance["episode_ids_shown"] == len(performance["episode_ids"]) == 5
    assert set(performance["episode_ids"]) <= set(tier)  # ids only: no marker standing for the rest
    assert smoke["episodes"] == smoke["episode_ids_shown"] == len(smoke["episode_ids"]) == 2
    text = CliRunner().invoke(main, ["init", "random", "babyai", "--dry-run", "--smoke-episodes", "2",
                                     "--eval-episodes", "7", "--runs-dir", str(tmp_path)]).output
    assert f"{', '.join(performance['episode_ids'])} and 2 more)" in text
    assert f"({', '.join(smoke['episode_ids'])});" in text


def test_dry_run_estimates_time_from_the_cached_episode_times_and_counts_certification(tmp_path, monkeypatch):
    import statistics

    monkeypatch.setenv("ARCHITECT_CACHE_DIR", str(tmp_path / "cache"))
    runs = str(tmp_path / "runs")
    before = cli("init", "random", "babyai", "--dry-run", *SMALL, "--runs-dir", runs)
    assert before["measured"] is None  # nothing measured yet: only the upper bound, and how to measure
    assert "`architect experiment run " in before["unmeasured"] and "--tier smoke --json`" in before["unmeasured"]
    certification = before["certification"]
    assert certification["rerun_episodes"] == 3 and certification["holdout_tier"] == "holdout"
    assert certification["episodes"] == 2 * 3 * 3 + 2 * certification["holdout_episodes"]
    assert certification["episodes_max"] == 2 * (2 + 3) * 3 + 2 * certification["holdout_episodes"]
    made = cli("init", "random", "babyai", "--run-id", "m", *SMALL, "--runs-dir", runs)
    metrics = json.loads((Path(made["run"]) / "iterations/0/eval/metrics.json").read_text())
    after = cli("init", "random", "babyai", "--dry-run", *SMALL, "--runs-dir", runs)
    measured = after["measured"]
    assert after["unmeasured"] is None
    assert measured["tier"] == "search" and measured["from_episodes"] == 3
    assert measured["seconds_per_episode"] == pytest.approx(
        statistics.fmean(r["wall_seconds"] for r in metrics["episodes"]), abs=1e-3)
    assert measured["wall_seconds_estimate"] < after["wall_seconds_max"] and "estimate" in measured["note"]
    assert "wall_seconds_estimate" in after["certification"]
    # 2 and 3 episodes are a handful: the run evaluates each on one worker, and the estimate follows it
    assert after["tiers"]["smoke"]["workers"] == after["tiers"]["performance"]["workers"] == after["workers"] == 1
    assert measured["wall_seconds_estimate"] == pytest.approx(measured["seconds_per_episode"] * 5, abs=0.1)


def test_manifest_records_provenance_and_iteration_zero_has_fitness(base_run: Path):
    manifest = json.loads((base_run / "manifest.json").read_text())
    assert manifest["provenance"]["packages"]["minigrid"] and manifest["provenance"]["executor"]["name"] == "babyai"
    fitness = json.loads((base_run / "iterations/0/fitness.json").read_text())
    assert fitness["text"].startswith("Mean score: ")


def test_a_run_of_another_format_version_is_refused_by_name(run_dir: Path):
    manifest = json.loads((run_dir / "manifest.json").read_text())
    (run_dir / "manifest.json").write_text(json.dumps(dict(manifest, schema_version=0)))
    out = cli("status", run_dir.name, "--runs-dir", str(run_dir.parent), ok=False)
    assert out["_exit_code"] != 0 and "run format version 0" in out["error"]
    assert "reads format version 1" in out["error"]


def test_check_refuses_a_candidate_identical_to_its_parent(run_dir: Path):
    runs = str(run_dir.parent)
    staging = cli("stage", run_dir.name, "--runs-dir", runs)["staging"]
    proposal = Path(staging, "proposal.md")
    proposal.write_text("---\ndescription: nothing yet\naxes: [planning]\nparent: 0\n---\nwhy\n")
    out = cli("check", run_dir.name, staging, "--runs-dir", runs, ok=False)
    assert [v["code"] for v in out["violations"]] == ["no_op"]
    graph = Path(staging, "candidate", "graph.json")
    graph.write_text(json.dumps(json.loads(graph.read_text()), indent=7))  # whitespace only: still the same candidate
    assert cli("check", run_dir.name, staging, "--runs-dir", runs, ok=False)["violations"][0]["code"] == "no_op"
    shutil.rmtree(staging)


def _renamed(graph: dict, old: str, new: str) -> dict:
    def ep(ref: str) -> str:
        node, _, port = ref.partition(".")
        return f"{new if node == old else node}.{port}"

    nodes = {new if nid == old else nid: spec for nid, spec in graph["nodes"].items()}
    return dict(graph, nodes=nodes, edges=[dict(e, **{"from": ep(e["from"]), "to": ep(e["to"])}) for e in graph["edges"]])


def test_check_refuses_behaviour_identical_copies_and_says_which_kind(tmp_path: Path):
    from harness.rundir.check import no_op_violations

    seed = json.loads((Path(__file__).parents[2] / "seeds" / "babyai" / "graph.json").read_text())

    def verdict(child: dict) -> str | None:
        for name, graph in (("parent", seed), ("child", child)):
            (tmp_path / name).mkdir(exist_ok=True)
            (tmp_path / name / "graph.json").write_text(json.dumps(graph))
        found = no_op_violations(tmp_path / "parent", tmp_path / "child")
        return found[0]["message"] if found else None

    assert "renamed node ids (memory → map)" in verdict(_renamed(seed, "memory", "map"))
    tap = {"type": "core.Constant", "config": {"value": 3}}
    dangling = dict(seed, nodes=dict(seed["nodes"], tap=tap, relay={"type": "core.Passthrough", "config": {}}),
                    edges=seed["edges"] + [{"from": "tap.value", "to": "relay.value"}])
    assert "added node(s) that reach no simulator input (relay, tap)" in verdict(dangling)
    both = _renamed(dict(dangling, description="another text"), "explore", "wander")
    message = verdict(both)
    assert "renamed node ids (explore → wander)" in message and "(relay, tap)" in message
    tuned = json.loads(json.dumps(seed))
    tuned["nodes"]["explore"]["config"]["length"] = 9
    assert verdict(tuned) is None                       # a config change is an attempt
    rewired = dict(seed, edges=[e for e in seed["edges"] if e["to"] != "commit.exploration"])
    assert verdict(rewired) is None                     # so is dropping an edge the loop uses


def test_provenance_asks_the_executor_spec_generically():
    from harness.executor_api import find_executor
    from harness.rundir.plan import provenance

    babyai, mapgpt = provenance(find_executor("babyai")), provenance(find_executor("mapgpt"))
    assert babyai["executor"] == {"name": "babyai"} and babyai["packages"]["numpy"]
    assert mapgpt["executor"]["backend"] in ("mattersim", "graph") and "data_sha256" in mapgpt["executor"]
    assert set(mapgpt["executor"]["data_present"]) == {"r2r"}

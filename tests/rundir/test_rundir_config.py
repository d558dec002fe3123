"""A loop the researcher configures: the tier (and its sealed holdout) from
init / loop / drive, shown in the manifest, status, dry run and report; an
iteration cap goal.md can lower; the output folders status names; committed
candidate paths in metrics.json."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rundir_kit import SMALL, cli

from harness.cli import main

STAND_IN = Path(__file__).with_name("iterate_stand_in.py")


def test_tier_chosen_at_init_is_the_runs_performance_tier_and_picks_its_holdout(tmp_path):
    runs = str(tmp_path / "runs")
    plan = cli("init", "random", "babyai", "--tier", "search-hard", "--dry-run", "--max-iterations", "4", *SMALL,
               "--runs-dir", runs)
    assert plan["performance_tier"] == "search-hard" and plan["holdout_tier"] == "holdout-hard"
    assert plan["tiers"]["performance"]["tier"] == "search-hard" and plan["max_iterations"] == 4
    assert plan["tiers"]["performance"]["episode_ids"][0].startswith("BabyAI-BossLevel-v0:10000")
    assert not Path(runs).exists()  # a dry run creates nothing
    made = cli("init", "random", "babyai", "--tier", "search-hard", "--run-id", "hard", "--max-iterations", "1",
               *SMALL, "--runs-dir", runs)
    run = Path(made["run"])
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["profiles"]["performance_tier"] == "search-hard"
    assert manifest["profiles"]["holdout_tier"] == "holdout-hard"
    metrics = json.loads((run / "iterations/0/eval/metrics.json").read_text())
    assert metrics["tier"] == "search-hard" and metrics["episodes"][0]["level"] == "BabyAI-BossLevel-v0"
    seed = made["iteration_0"]  # init's JSON gives iteration 0's figures and what to run next
    assert seed["status"] == "committed" and seed["primary"]["mean"] == pytest.approx(metrics["primary"]["mean"])
    assert seed["smoke"]["passed"] is True and made["next"] == f"architect status {run} --json"
    status = cli("status", "hard", "--runs-dir", runs)
    assert status["tier"] == "search-hard" and status["holdout_tier"] == "holdout-hard"
    assert "tiers: performance search-hard" in status["summary"] and "holdout-hard" in status["summary"]
    page = Path(cli("report", "hard", "--runs-dir", runs)["report"]).read_text()
    assert "performance tier search-hard" in page and "sealed holdout holdout-hard" in page
    # the loop keeps the run's tier; another one is refused on resume
    refused = cli("loop", "random", "babyai", "--run-id", "hard", "--resume", "--tier", "search", "--runs-dir", runs,
                  ok=False)
    assert refused["_exit_code"] != 0 and "searches tier 'search-hard'" in refused["error"]
    certified = cli("certify", "hard", "--reruns", "1", "--holdout-episodes", "1", "--runs-dir", runs)
    assert certified["holdout"]["tier"] == "holdout-hard"
    assert certified["holdout"]["size"].startswith("1 episodes: tier 'holdout-hard' of babyai, ")
    assert certified["holdout"]["size"].endswith("1 of them, taken round-robin over its groups (--holdout-episodes 1)")
    printed = list(_floats(certified))
    assert printed and all(float(f"{x:.6g}") == x for x in printed)  # statistics printed at 6 significant digits


def _floats(value):
    if isinstance(value, float):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _floats(v)
    elif isinstance(value, list):
        for v in value:
            yield from _floats(v)


def test_tier_must_be_an_open_tier_of_the_executor(tmp_path):
    runs = str(tmp_path / "runs")
    sealed = cli("init", "random", "babyai", "--tier", "holdout-hard", "--runs-dir", runs, ok=False)
    assert "is sealed" in sealed["error"] and "search-hard" in sealed["error"]
    unknown = cli("loop", "random", "babyai", "--tier", "nope", "--runs-dir", runs, ok=False)
    assert "no such tier" in unknown["error"] and "choose one of" in unknown["error"]
    assert not Path(runs).exists() or not any(Path(runs).iterdir())


def test_goal_md_lowers_the_iteration_cap_but_never_raises_it(run_dir: Path):
    runs = str(run_dir.parent)
    goal = run_dir / "goal.md"
    text = goal.read_text()
    assert text.startswith("---\nmax_iterations: 40")  # the run's cap, written at init
    assert cli("status", run_dir.name, "--runs-dir", runs)["stop"] is None
    goal.write_text(text.replace("max_iterations: 40", "max_iterations: 0", 1))
    status = cli("status", run_dir.name, "--runs-dir", runs)
    assert status["iteration_cap"] == {"cap": 0, "manifest": 40, "goal": 0}
    assert status["stop"]["code"] == "max_iterations" and "goal.md lowers" in status["stop"]["reason"]
    out = cli("loop", "random", "babyai", "--run-id", run_dir.name, "--resume", "--no-certify", "--runs-dir", runs)
    assert out["stop_reason"] == "max_iterations" and [r["iteration"] for r in out["rows"]] == [0]
    goal.write_text(text.replace("max_iterations: 40", "max_iterations: 99", 1))
    assert cli("status", run_dir.name, "--runs-dir", runs)["iteration_cap"]["cap"] == 40
    goal.write_text(text.replace("max_iterations: 40", "max_iterations: many", 1))
    bad = cli("status", run_dir.name, "--runs-dir", runs, ok=False)
    assert bad["_exit_code"] != 0 and "goal.md" in bad["error"] and "fix goal.md" in bad["error"]


def test_goal_md_says_what_its_front_matter_may_hold_and_who_reads_what(run_dir: Path):
    from harness.rundir import goal
    from harness.rundir.layout import RunPaths
    from harness.schemas import load_schema

    text = (run_dir / "goal.md").read_text()
    front, body = text.split("\n---\n", 1)
    # the front matter as init wrote it holds exactly the keys the schema allows, and says so
    assert goal.settings(RunPaths(run_dir)) == {"max_iterations": 40}
    assert set(load_schema("goal_front_matter")["properties"]) == {"max_iterations"}
    assert "Only `max_iterations: N` may" in front and "can only lower the run's cap (40" in front
    assert "read by the harness before every" in front
    # the body says who reads it (the optimizer, every iteration) and where the researcher writes
    assert "reads all of it at the start of every iteration" in body and "## Researcher's notes" in body
    assert "The harness reads only the front matter" in body
    runs = str(run_dir.parent)
    (run_dir / "goal.md").write_text(text.replace("max_iterations: 40", "max_iterations: 40\ntier: search-hard", 1))
    bad = cli("status", run_dir.name, "--runs-dir", runs, ok=False)
    assert bad["_exit_code"] != 0 and "tier" in bad["error"] and "may hold only max_iterations: N" in bad["error"]


def test_drive_passes_the_tier_and_cap_to_the_session_that_creates_the_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    agent = f"{shlex.quote(sys.executable)} {shlex.quote(str(STAND_IN))}"
    out = cli("drive", "random", "babyai", "--agent-command", agent, "--tier", "search-hard", "--max-iterations", "1",
              "--runs-dir", str(tmp_path / "runs"))
    manifest = json.loads((tmp_path / "runs/random-babyai/manifest.json").read_text())
    assert manifest["profiles"]["performance_tier"] == "search-hard" and manifest["caps"]["max_iterations"] == 1
    assert out["stop_reason"].startswith("max_iterations: 1 of 1")


def test_status_and_help_name_every_output_folder(run_dir: Path, monkeypatch, tmp_path):
    monkeypatch.setenv("ARCHITECT_DATA_DIR", str(tmp_path / "data"))
    status = cli("status", str(run_dir))
    roots = status["roots"]
    assert set(roots) == {"runs", "results", "reports", "cache", "data"}
    assert roots["data"]["path"] == str((tmp_path / "data").resolve()) and roots["data"]["variable"] == "ARCHITECT_DATA_DIR"
    assert roots["results"]["variable"] == "ARCHITECT_RESULTS_DIR" and roots["cache"]["variable"] == "ARCHITECT_CACHE_DIR"
    assert str((tmp_path / "data").resolve()) in status["summary"]
    helped = CliRunner().invoke(main, ["--help"]).output
    for variable in ("ARCHITECT_RUNS_DIR", "ARCHITECT_RESULTS_DIR", "ARCHITECT_CACHE_DIR", "ARCHITECT_DATA_DIR"):
        assert variable in helped


def test_metrics_record_where_the_candidate_was_committed(run_dir: Path):
    runs = str(run_dir.parent)
    staging = Path(cli("stage", run_dir.name, "--runs-dir", runs)["staging"])
    graph = json.loads((staging / "candidate/graph.json").read_text())
    graph["nodes"]["explore"]["config"]["hand"] = "left"
    (staging / "candidate/graph.json").write_text(json.dumps(graph))
    for step in ("check", "smoke", "evaluate"):
        cli(step, run_dir.name, str(staging), "--runs-dir", runs)
    cli("commit", run_dir.name, str(staging), "--description", "left hand", "--runs-dir", runs)
    assert not staging.exists()
    for n in (0, 1):
        for kind in ("smoke", "eval"):
            path = json.loads((run_dir / f"iterations/{n}/{kind}/metrics.json").read_text())["candidate"]["path"]
            assert path == f"iterations/{n}/candidate/graph.json" and (run_dir / path).is_file()

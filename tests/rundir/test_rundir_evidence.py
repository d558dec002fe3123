"""`architect evaluate --race`, `architect episodes` and `architect episode` on a real run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rundir_kit import cli

from harness.canvas.patch import apply_patch
from harness.cli import main

def cli_text(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


LEFT_HAND = {"ops": [{"op": "set_config", "node": "explore", "pointer": "/hand", "value": "left"}]}


def _staged_child(run_dir: Path) -> Path:
    staging = Path(cli("stage", str(run_dir))["staging"])
    graph_path = staging / "candidate" / "graph.json"
    graph_path.write_text(json.dumps(apply_patch(json.loads(graph_path.read_text()), LEFT_HAND)))
    assert cli("check", str(run_dir), str(staging))["ok"]
    assert cli("smoke", str(run_dir), str(staging))["passed"]
    return staging


def test_race_then_episodes_and_episode_views_agree_with_the_records(run_dir: Path):
    staging = _staged_child(run_dir)
    raced = cli("evaluate", str(run_dir), str(staging), "--race", "--batch", "3", "--margin", "0.5")
    race = json.loads((staging / "eval" / "race.json").read_text())
    assert raced["passed"] and raced["race"] == race and race["parent"] == 0
    assert raced["complete"] is True and raced["infra_failures"] == 0
    assert race["verdict"] in ("better", "worse", "indistinguishable") and 1 <= race["episodes"] <= 3
    assert "P(better or worse) ≤ 0.05" in race["error_rates"]
    metrics = json.loads((staging / "eval" / "metrics.json").read_text())
    assert metrics["n_episodes"] == race["episodes"] and metrics["complete"]

    # the slot's view before committing, by staging path
    before = cli("episodes", str(run_dir), str(staging))
    assert before["b"] == f"staging {staging.name}" and before["shared"] == race["episodes"]

    evaluated = cli("evaluate", str(run_dir), str(staging))  # the full evaluation, for the commit
    assert evaluated["passed"] and evaluated["complete"] is True and evaluated["infra_failures"] == 0
    cli("commit", str(run_dir), str(staging), "--description", "left hand")
    view = cli("episodes", str(run_dir), "1")
    parent = {r["episode_id"]: r["success"] for r in json.loads(
        (run_dir / "iterations/0/eval/metrics.json").read_text())["episodes"]}
    child = {r["episode_id"]: r["success"] for r in json.loads(
        (run_dir / "iterations/1/eval/metrics.json").read_text())["episodes"]}
    assert view["a"] == "iteration 0" and view["shared"] == len(parent) == 3
    assert view["episodes"]["gained"] == [e for e in child if child[e] and not parent[e]]
    assert view["episodes"]["lost"] == [e for e in child if parent[e] and not child[e]]
    assert view["metrics"]["success_rate"]["verdict"] == view["verdict"]

    episode = next(iter(child))
    trace = cli("episode", str(run_dir), "1", episode, "--vs", "0", "--max-bytes", "0")
    assert trace["episode_id"] == episode and trace["ticks"][0]["tick"] == 0
    point = trace["vs"]["divergence"]
    assert point is None or point["node"] == "explore"
    at_tick = cli("episode", str(run_dir), "0", episode, "--tick", "0")
    assert [t["tick"] for t in at_tick["ticks"]] == [0] and "true grid at tick 0" in at_tick["view"]["rendered"]


def test_evidence_commands_refuse_bad_references_with_one_line(run_dir: Path):
    out = cli("episodes", str(run_dir), "9", ok=False)
    assert out["_exit_code"] != 0 and "iteration 9: not committed" in out["error"]
    out = cli("episode", str(run_dir), "0", "no-such-episode", ok=False)
    assert "matches none" in out["error"]


def test_episodes_view_reports_log_gap_findings(run_dir: Path):
    path = run_dir / "iterations/0/eval/metrics.json"
    metrics = json.loads(path.read_text())
    assert [f["kind"] for f in cli("episodes", str(run_dir), "0", "--vs", "0")["findings"]] == ["failures"]
    metrics["findings"] = [{"kind": "log_gap", "node": "composer", "count": 2, "episodes": 1,
                            "message": "node 'composer' made 2 model call(s) in 1 episode(s) that the "
                                       "episode log does not account for"}]
    path.write_text(json.dumps(metrics))
    view = cli("episodes", str(run_dir), "0", "--vs", "0")
    assert view["findings"][1:] == metrics["findings"]
    assert "finding (log_gap): node 'composer' made 2 model call(s)" in view["text"]


def test_an_iteration_without_a_parent_lists_its_failures(run_dir: Path):
    metrics = json.loads((run_dir / "iterations/0/eval/metrics.json").read_text())
    failed = [r for r in metrics["episodes"] if not r["success"]]
    view = cli("episodes", str(run_dir), "0")
    assert view["a"] is None and "gained" not in view.get("episodes", {})
    assert [f["episode_id"] for f in view["failures"]] == [r["episode_id"] for r in failed]
    summary = view["findings"][0]
    assert summary["kind"] == "failures" and summary["summary"]["failed"] == len(failed)
    assert summary["summary"]["episodes"] == len(metrics["episodes"])
    for entry, record in zip(view["failures"], failed):
        assert entry["reason"].split(" ")[0] == record["termination"] and entry["level"] == record["level"]
        lines = [json.loads(line) for line in (run_dir / "iterations/0/eval" / record["log"]).read_text().splitlines()]
        agents = [f for f in lines if f["kind"] == "firing" and f["node"] != "sim"]
        assert entry["last_agent_firing"]["node"] == agents[-1]["node"]
        assert entry["last_agent_firing"]["tick"] == agents[-1]["tick"]
    assert "has no parent to compare with" in view["text"]


def test_episodes_metrics_table_lists_every_episode_with_per_level_aggregates(run_dir: Path):
    metrics = json.loads((run_dir / "iterations/0/eval/metrics.json").read_text())
    view = cli("episodes", str(run_dir), "0", "--metrics")
    table = view["per_episode"]
    assert table["vs"] is None and "failures" in view          # the usual view stays, the table is added
    assert table["metrics"] == [{"name": "steps", "direction": "lower"}, {"name": "reward", "direction": "higher"},
                                {"name": "path_efficiency", "direction": "higher"}]   # babyai's, success aside
    assert (table["primary"]["metric"], table["primary"]["column"]) == ("success_rate", "success")
    assert [r["episode_id"] for r in table["episodes"]] == [r["episode_id"] for r in metrics["episodes"]]
    for row, record in zip(table["episodes"], metrics["episodes"]):
        assert (row["level"], row["success"]) == (record["level"], record["success"])
        assert row["termination"].split(" ")[0] == record["termination"]
        assert row["metrics"] == pytest.approx({"steps": record["steps"], "reward": record["reward"],
                                                "path_efficiency": record["metrics"]["path_efficiency"]}, rel=1e-5)
        assert "vs" not in row
    levels = {r["level"] for r in metrics["episodes"]}
    assert set(table["levels"]) == levels
    whole = table["all"]
    assert whole["episodes"] == 3 and whole["successes"] == sum(r["success"] for r in metrics["episodes"])
    assert whole["means"]["steps"] == pytest.approx(sum(r["steps"] for r in metrics["episodes"]) / 3, rel=1e-5)
    assert sum(whole["terminations"].values()) == 3
    text = cli_text("episodes", str(run_dir), "0", "--metrics")
    assert "steps (lower)" in text and "reward (higher)" in text and "per level" in text
    assert all(r["episode_id"] in text for r in metrics["episodes"])


def test_episodes_metrics_against_another_iteration_marks_each_change_in_its_direction(run_dir: Path):
    from harness.rundir.metrics_table import metrics_table, render

    parent = json.loads((run_dir / "iterations/0/eval/metrics.json").read_text())
    child = json.loads(json.dumps(parent))
    first, second = child["episodes"][0], child["episodes"][1]
    first.update(steps=first["steps"] + 5, success=True)        # more steps: worse for babyai's "lower" steps
    second["steps"] = second["steps"] - 1                        # fewer steps: better
    child["episodes"] = child["episodes"][:2] + [dict(child["episodes"][2], episode_id="other:1")]
    table = metrics_table(child, "iteration 1", parent, "iteration 0")
    assert [r["episode_id"] for r in table["episodes"]] == [first["episode_id"], second["episode_id"]]
    one, two = table["episodes"]
    assert one["change"]["steps"] == "worse" and two["change"]["steps"] == "better"
    assert one["change"]["reward"] == "same" and one["vs"]["metrics"]["steps"] == parent["episodes"][0]["steps"]
    assert one["outcome"] == ("unchanged" if parent["episodes"][0]["success"] else "gained")
    assert (table["only_vs"], table["only_this"]) == (1, 1)
    assert table["all"]["vs"]["episodes"] == 2 and table["all"]["change"]["reward"] == "same"
    text = render(table)
    assert f"{parent['episodes'][0]['steps']:g}→{first['steps']:g} ↓" in text
    assert "A→B is iteration 0→iteration 1" in text and "not shared: 1 of iteration 0's, 1 of iteration 1's" in text
    # the CLI gives the same table against --vs
    view = cli("episodes", str(run_dir), "0", "--vs", "0", "--metrics")
    assert view["per_episode"]["vs"] == "iteration 0"
    assert all(set(r["change"].values()) == {"same"} for r in view["per_episode"]["episodes"])


def test_episodes_help_explains_the_metrics_table():
    text = cli_text("episodes", "--help")
    assert "--metrics" in text and "better direction" in text and "per_episode" in text


def test_smoke_and_evaluate_with_json_report_progress_on_stderr_and_one_object_on_stdout(run_dir: Path):
    staging = Path(cli("stage", str(run_dir))["staging"])
    for command, tier in (("smoke", "smoke"), ("evaluate", "search")):
        result = CliRunner().invoke(main, [command, str(run_dir), str(staging), "--json"], catch_exceptions=False)
        assert result.exit_code == 0 and json.loads(result.stdout)["ok"] is True
        # (a coding agent reading the command's output sees that the evaluation is alive)
        assert f"{tier}: " in result.stderr and " episodes" in result.stderr, (command, result.stderr)

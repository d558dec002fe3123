"""`architect evaluate --race`, `architect episodes` and `architect episode` on a real run."""

from __future__ import annotations

import json
from pathlib import Path

from rundir_kit import cli

from harness.canvas.patch import apply_patch

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
    trace = cli("episode", str(run_dir), "1", episode, "--vs", "0")
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

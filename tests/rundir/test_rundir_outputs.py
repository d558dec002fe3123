"""`architect outputs`: one node's output values over a whole evaluation, counted from
the episode logs; and the note a commit gives when it became the best by a rule other
than a variant's accept rule."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from rundir_kit import cli

from harness.canvas.log_reader import read_log


def _logged(run_dir: Path, node: str, port: str) -> tuple[Counter, set[str]]:
    eval_dir = run_dir / "iterations/0/eval"
    counts, episodes = Counter(), set()
    for record in json.loads((eval_dir / "metrics.json").read_text())["episodes"]:
        for firing in read_log(eval_dir / record["log"])[1]:
            if firing.get("node") == node and port in (firing.get("outputs") or {}):
                counts[json.dumps(firing["outputs"][port], sort_keys=True)] += 1
                episodes.add(record["episode_id"])
    return counts, episodes


def test_outputs_counts_every_value_of_a_port_with_its_episodes(run_dir: Path):
    runs = str(run_dir.parent)
    view = cli("outputs", run_dir.name, "0", "act", "--port", "explore", "--runs-dir", runs)
    counts, episodes = _logged(run_dir, "act", "explore")
    port = view["ports"]["explore"]
    assert list(view["ports"]) == ["explore"] and port["firings"] == sum(counts.values()) > 0
    assert {json.dumps(v["value"], sort_keys=True): v["firings"] for v in port["values"]} == dict(counts)
    assert set().union(*(v["episodes"] for v in port["values"])) == episodes
    levels = {r["level"] for r in json.loads((run_dir / "iterations/0/eval/metrics.json").read_text())["episodes"]}
    assert set(port["by_group"]) <= levels
    assert sum(sum(c.values()) for c in port["by_group"].values()) == port["firings"]
    beside = cli("outputs", run_dir.name, "0", "act", "--vs", "0", "--runs-dir", runs)
    assert beside["vs"]["ports"] == beside["ports"] and "explore" in beside["ports"]


def test_outputs_names_what_exists_when_the_node_or_port_does_not(run_dir: Path):
    runs = str(run_dir.parent)
    missing = cli("outputs", run_dir.name, "0", "nosuch", "--runs-dir", runs, ok=False)
    assert missing["_exit_code"] != 0 and "no node 'nosuch' fired" in missing["error"] and "act" in missing["error"]
    port = cli("outputs", run_dir.name, "0", "act", "--port", "nope", "--runs-dir", runs, ok=False)
    assert "its ports:" in port["error"] and "explore" in port["error"] and "--port" in port["error"]


def test_port_summary_summarises_numbers():
    from harness.rundir.outputs import port_summary

    rows = [("e1", "L1", 1), ("e1", "L1", 3), ("e2", "L2", 5)]
    summary = port_summary(rows)
    assert summary["summary"] == {"mean": 3, "min": 1, "max": 5, "distinct": 3}
    assert summary["summary_by_group"] == {"L1": {"firings": 2, "mean": 2}, "L2": {"firings": 1, "mean": 5}}
    assert [v["value"] for v in summary["values"]] == [1, 3, 5]
    many = port_summary([("e", "g", float(i)) for i in range(30)])
    assert "values" not in many and many["summary"]["distinct"] == 30


def test_a_commit_that_becomes_best_without_being_better_says_how_the_rules_differ():
    from harness.cli.run_cmds import _best_note

    row = {"iteration": 2, "vs_parent": {"verdict": "indistinguishable"}}
    note = _best_note(row, {"iteration": 2})
    assert "now the run's best" in note and "indistinguishable" in note and "not accepted" in note
    assert _best_note(row, {"iteration": 1}) is None
    assert _best_note(dict(row, vs_parent={"verdict": "better"}), {"iteration": 2}) is None


def test_status_names_the_best_rule(run_dir: Path):
    from harness.rundir.ledger import BEST_RULE

    status = cli("status", run_dir.name, "--runs-dir", str(run_dir.parent))
    assert status["best_rule"] == BEST_RULE and status["ok"] is True
    assert "round-robin over its groups" in status["summary"]  # the fixture's --eval-episodes cap

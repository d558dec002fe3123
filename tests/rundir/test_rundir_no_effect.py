"""A child that passes check (its live graph differs) but acts exactly as its
parent on every episode: commit warns and says so in the ledger description;
a child that acts differently gets no such note."""

from __future__ import annotations

import json
from pathlib import Path

from rundir_kit import cli
from test_rundir_discards import edit_graph, stage


def _evaluated(run_dir: Path, patch: dict) -> Path:
    staging = stage(run_dir)
    edit_graph(staging, patch)
    assert cli("check", str(run_dir), str(staging))["ok"]
    assert cli("smoke", str(run_dir), str(staging))["passed"]
    assert cli("evaluate", str(run_dir), str(staging))["passed"]
    return staging


def test_commit_warns_when_the_child_behaves_exactly_as_its_parent(run_dir: Path):
    # a step budget far above what these episodes take: a real change that cannot act here
    staging = _evaluated(run_dir, {"ops": [{"op": "set_budget", "budgets": {"max_steps": 999}}]})
    row = cli("commit", str(run_dir), str(staging), "--description", "lower step budget")
    assert row["identical_to_parent"]["identical"] is True and row["identical_to_parent"]["episodes"] == 3
    assert "behaviour identical to parent 0 on all 3 shared episodes" in row["warning"]
    ledger = [json.loads(line) for line in (run_dir / "ledger.jsonl").read_text().splitlines()]
    assert ledger[-1]["description"].startswith("lower step budget [behaviour identical to parent 0")


def test_commit_of_a_child_that_acts_differently_has_no_warning(run_dir: Path):
    staging = _evaluated(run_dir, {"ops": [{"op": "set_config", "id": "explore", "pointer": "/hand", "value": "left"}]})
    row = cli("commit", str(run_dir), str(staging), "--description", "left-hand wall following")
    assert row["warning"] is None and row["identical_to_parent"]["identical"] is False
    assert row["identical_to_parent"]["first_difference"]["why"]
    assert row["description"] == "left-hand wall following"


def test_kdloop_pick_warns_when_the_best_slot_behaves_exactly_as_the_parent(run_dir: Path, tmp_path: Path):
    cli("kdloop", "init", str(run_dir))
    specs = tmp_path / "specs.json"
    specs.write_text(json.dumps({"iteration": 1, "parent": 0, "specs": [
        {"id": "s1", "description": "lower step budget", "axes": ["control/action gating"], "hypothesis": "none"}]}))
    slot = Path(cli("stage", str(run_dir), "--parent", "0", "--slot", "1")["staging"])
    edit_graph(slot, {"ops": [{"op": "set_budget", "budgets": {"max_steps": 999}}]})
    assert cli("check", str(run_dir), str(slot))["ok"] and cli("smoke", str(run_dir), str(slot))["passed"]
    assert cli("evaluate", str(run_dir), str(slot))["passed"]
    picked = cli("kdloop", "pick", str(run_dir), str(specs), str(slot))
    assert picked["best"] == str(slot) and picked["best_identical_to_parent"]["identical"] is True
    assert "behaviour identical to parent 0" in picked["warning"]

"""Attempts that must not be committed: an edit outside the whitelist, a
broken graph, a candidate failing the smoke gate; and commit's own guards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rundir_kit import cli, git, iteration_commits
from harness.canvas.patch import apply_patch
from harness.rundir.whitelist import allowed


def stage(run_dir: Path, *extra: str) -> Path:
    return Path(cli("stage", str(run_dir), *extra)["staging"])


def edit_graph(staging: Path, patch: dict) -> None:
    path = staging / "candidate" / "graph.json"
    path.write_text(json.dumps(apply_patch(json.loads(path.read_text()), patch), indent=2))


def discard_and_check_ledger(run_dir: Path, staging: Path, reason: str, skips: int) -> dict:
    out = cli("discard", str(run_dir), str(staging), "--reason", reason)
    assert out["status"] == "discarded" and out["reason"] == reason
    assert out["consecutive_skips"] == skips
    assert not staging.exists()
    last = json.loads((run_dir / "ledger.jsonl").read_text().splitlines()[-1])
    assert last["status"] == "discarded" and last["reason"] == reason
    return out


def test_edit_outside_whitelist_and_broken_graph_are_reported_and_discarded(run_dir: Path):
    whitelist = json.loads((run_dir / "manifest.json").read_text())["profiles"]["whitelist"]
    staging = stage(run_dir)
    assert staging.name == "1" and (staging / "proposal.md").is_file()
    outside = "framework_override.py"
    assert not allowed(outside, whitelist)
    (staging / "candidate" / outside).write_text("print('patched the framework')\n")
    out = cli("check", str(run_dir), str(staging), ok=False)
    assert out["_exit_code"] == 1
    assert [v["path"] for v in out["violations"] if v["code"] == "whitelist"] == [outside]
    discard_and_check_ledger(run_dir, staging, "edit outside the whitelist", skips=1)

    staging = stage(run_dir)
    assert staging.name == "1", "a discarded attempt must not use up an iteration number"
    graph_path = staging / "candidate" / "graph.json"
    graph = json.loads(graph_path.read_text())
    graph["edges"].append({"from": "perceive.no_such_port", "to": "act.observation"})
    graph["nodes"]["ghost"] = {"type": "babyai.DoesNotExist", "config": {}}
    graph_path.write_text(json.dumps(graph))
    out = cli("check", str(run_dir), str(staging), ok=False)
    codes = {v["code"] for v in out["violations"]}
    assert {"unknown_port", "unknown_type"} <= codes, out["violations"]
    assert all(v["path"].startswith("graph.json") for v in out["violations"])
    graph_path.write_text('{"nodes": {,}}')
    out = cli("check", str(run_dir), str(staging), ok=False)
    assert out["violations"][0]["code"] == "json_parse" and out["violations"][0]["path"] == "graph.json:1:12"
    discard_and_check_ledger(run_dir, staging, "broken graph", skips=2)
    assert iteration_commits(run_dir) == [0]
    status = cli("status", str(run_dir))
    assert status["consistent"] and status["state"]["consecutive_skips"] == 2


def test_candidate_failing_the_smoke_gate_cannot_be_committed(run_dir: Path):
    staging = stage(run_dir)
    # statically valid, but the stop gate now only ever sees exploration chunks: no action reaches the simulator
    edit_graph(staging, {"ops": [{"op": "remove_edge", "from": "commit.chunk", "to": "stop.chunk"},
                                 {"op": "add_edge", "from": "explore.chunk", "to": "stop.chunk"}]})
    assert cli("check", str(run_dir), str(staging))["ok"]
    smoke = cli("smoke", str(run_dir), str(staging), ok=False)
    assert smoke["_exit_code"] == 1 and not smoke["passed"]
    assert any("no simulator step" in r or "unclean exit" in r for r in smoke["reasons"]), smoke["reasons"]
    refused = cli("commit", str(run_dir), str(staging), "--description", "try anyway", ok=False)
    assert refused["_exit_code"] != 0 and "smoke failed" in refused["error"]
    assert "no eval result" in refused["error"]
    discard_and_check_ledger(run_dir, staging, "smoke gate failed", skips=1)
    assert iteration_commits(run_dir) == [0]


def test_commit_requires_results_for_the_current_content(run_dir: Path):
    staging = stage(run_dir)
    edit_graph(staging, {"ops": [{"op": "set_config", "id": "explore", "pointer": "/hand", "value": "left"}]})
    refused = cli("commit", str(run_dir), str(staging), "--description", "x", ok=False)
    assert "not checked" in refused["error"]
    assert cli("check", str(run_dir), str(staging))["ok"]
    assert cli("smoke", str(run_dir), str(staging))["passed"]
    assert cli("evaluate", str(run_dir), str(staging))["passed"]
    # edited after evaluation: every result is stale
    edit_graph(staging, {"ops": [{"op": "set_config", "id": "explore", "pointer": "/length", "value": 4}]})
    refused = cli("commit", str(run_dir), str(staging), "--description", "x", ok=False)
    assert "changed after `architect check`" in refused["error"]
    assert "changed after `architect smoke`" in refused["error"]
    edit_graph(staging, {"ops": [{"op": "set_config", "id": "explore", "pointer": "/length", "value": 8}]})
    row = cli("commit", str(run_dir), str(staging), "--description", "left-hand wall following")
    assert row["iteration"] == 1 and row["parent"] == 0
    assert iteration_commits(run_dir) == [0, 1]
    assert git(run_dir, "log", "-1", "--format=%s").strip() == "iteration 1: left-hand wall following"
    patch = json.loads((run_dir / "iterations/1/patch.json").read_text())
    assert patch["ops"] and "hand" in json.dumps(patch)
    diff = (run_dir / "iterations/1/diff.txt").read_text().splitlines()
    assert diff[:2] == ["--- a/graph.json", "+++ b/graph.json"]
    assert any(line.startswith("+") and '"left"' in line for line in diff)
    # the next stage starts from the best iteration by default, and takes the next number
    nxt = stage(run_dir)
    assert nxt.name == "2"


@pytest.mark.parametrize("args, message", [
    (["stage", "no-such-run"], "no run at 'no-such-run'"),
    (["loop", "kdloop", "babyai"], "/architect:loop kdloop babyai"),
])
def test_bad_input_is_one_clear_error(args, message, tmp_path):
    out = cli(*args, "--runs-dir", str(tmp_path), ok=False)
    assert out["_exit_code"] != 0 and out["ok"] is False and message in out["error"]
    assert list(tmp_path.iterdir()) == []


def test_stage_rejects_unknown_parent_and_init_refuses_an_existing_run(run_dir: Path):
    out = cli("stage", str(run_dir), "--parent", "5", ok=False)
    assert "--parent 5" in out["error"]
    before = (run_dir / "ledger.jsonl").read_text()
    out = cli("init", "random", "babyai", "--run-id", run_dir.name, "--runs-dir", str(run_dir.parent), ok=False)
    assert "already exists" in out["error"]
    assert (run_dir / "ledger.jsonl").read_text() == before


def test_hostile_context_harness_is_a_check_violation(run_dir: Path):
    staging = stage(run_dir)
    (staging / "candidate" / "build_context.py").write_text(
        "import os\n\ndef build_context(history):\n    return os.environ.get('HOME', '')\n")
    out = cli("check", str(run_dir), str(staging), ok=False)
    assert out["_exit_code"] == 1
    harness = [v for v in out["violations"] if v["code"] == "context_harness"]
    assert harness and all(v["path"] == "build_context.py" for v in harness), out["violations"]
    assert any("import" in v["message"] for v in harness)


@pytest.mark.parametrize("front", ["---\ndescription: widen the view\naxes: [planning, nonsense]\nparent: [0\n---\nwhy\n",
                                   "---\ndescription: never closed\naxes: [memory]\n",
                                   "---\n\tdescription: : : tabs\n---\n"])
def test_discard_works_when_the_proposal_front_matter_is_not_valid_yaml(run_dir: Path, front):
    staging = stage(run_dir)
    (staging / "proposal.md").write_text(front)
    out = cli("discard", str(run_dir), str(staging), "--reason", "bad proposal")
    assert out["status"] == "discarded" and not staging.exists()
    assert out["reason"].startswith("bad proposal (proposal.md unreadable: ")
    last = json.loads((run_dir / "ledger.jsonl").read_text().splitlines()[-1])
    assert last["status"] == "discarded" and last["reason"] == out["reason"]
    if "widen" in front:  # what could be read is recorded
        assert last["description"] == "widen the view" and last["axes"] == ["planning"]
    assert cli("status", str(run_dir))["consistent"]

"""`architect smoke --json` lists every episode's outcome (id, success,
termination) and, against the parent's smoke run, the episodes gained and lost."""

from __future__ import annotations

import json

from rundir_kit import cli


def test_smoke_lists_each_episode_and_what_changed_against_the_parent(run_dir):
    staging = cli("stage", str(run_dir))["staging"]
    parent_metrics = run_dir / "iterations" / "0" / "smoke" / "metrics.json"
    doc = json.loads(parent_metrics.read_text())
    first = doc["episodes"][0]
    first["success"] = not first["success"]  # the parent's outcome differs on this one episode
    parent_metrics.write_text(json.dumps(doc))
    out = cli("smoke", str(run_dir), staging)
    mine = json.loads((run_dir / "staging" / "1" / "smoke" / "metrics.json").read_text())["episodes"]
    assert out["episode_outcomes"] == [{"episode_id": e["episode_id"], "success": e["success"],
                                        "termination": e["termination"]} for e in mine]
    assert len(mine) == 2 and all(e["termination"] for e in out["episode_outcomes"])
    vs = out["vs_parent"]
    assert vs["parent"] == 0 and vs["shared"] == 2
    changed = vs["gained"] if mine[0]["success"] else vs["lost"]
    assert changed == [first["episode_id"]] and (vs["gained"] + vs["lost"]) == changed

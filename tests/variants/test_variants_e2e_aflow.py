"""AFlow end to end on the BabyAI executor: variants/aflow.md's sequence with
scripted proposals applied as structured patches."""

import json
from pathlib import Path

from variantkit import git_log

FRONTIER = {"ops": [{"op": "retype_node", "id": "explore", "type": "babyai.FrontierExplore", "config": {}}]}
BROKEN = {"ops": [{"op": "add_edge", "from": "pose.nonexistent", "to": "act.pose"}]}


def _implement(d, staging, ops, valid=True):
    Path(staging, "edit.json").write_text(json.dumps(ops))
    d.run("implementer",
          "architect patch $staging/candidate/graph.json $staging/edit.json -o $staging/candidate/graph.json --json",
          ok=valid, staging=staging)
    return d.run("implementer", "architect check $run $staging --json", ok=valid, staging=staging)


def test_aflow_iterations_end_to_end(driver):
    d = driver
    d.values.update({"$variant": "aflow", "$executor": "babyai"})
    d.run("loop", "architect init $variant $executor --run-id $variant-$executor OPTIONS --json")
    d.values["$run"] = "aflow-babyai"
    run_dir = d.workdir / "runs" / "aflow-babyai"

    # iteration 1
    assert d.run("variants/aflow", "architect aflow converged $run --json")["converged"] is False
    selection = d.run("variants/aflow", "architect aflow select $run --json")
    assert selection["parent"] == 0 and [c["iteration"] for c in selection["candidates"]] == [0]
    assert d.run("variants/aflow", "architect aflow select $run --json") == selection  # survives a compaction
    exp = d.run("variants/aflow", "architect aflow experience $run --parent P --json", P=0)
    assert exp["accepted"] == 0 and "none yet" in (run_dir / "memory" / "experience.md").read_text()
    staging = d.run("variants/aflow", "architect stage $run --parent P --json", P=0)["staging"]
    d.write_proposal(staging, "explore frontiers instead of following walls", ["exploration"], 0, "walls loop")
    before = d.run("variants/aflow", "architect aflow duplicate $run STAGING --json", STAGING=staging)
    assert before["duplicate"] is False and before["compared"] == ["description"]  # not implemented yet
    _implement(d, staging, FRONTIER)
    d.run("implementer", "architect smoke $run $staging --json", staging=staging)
    after = d.run("variants/aflow", "architect aflow duplicate $run STAGING --json", STAGING=staging)
    assert after["duplicate"] is False and after["compared"] == ["description", "content hash", "patch"]
    d.run("evaluator", "architect evaluate $run $staging --json", staging=staging)
    fitness = d.run("evaluator", "architect fitness $run $staging --json", staging=staging)
    assert fitness["text"].startswith("Mean score: ")
    committed = d.run("evaluator", "architect commit $run $staging --json", staging=staging)
    assert committed["iteration"] == 1 and committed["axes"] == ["exploration"]

    # iteration 2: parent among {0, 1}; a duplicate proposal is resampled
    selection = d.run("variants/aflow", "architect aflow select $run --json")
    assert sorted(c["iteration"] for c in selection["candidates"]) == [0, 1]
    assert abs(sum(c["probability"] for c in selection["candidates"]) - 1.0) < 1e-9
    parent = selection["parent"]
    d.run("variants/aflow", "architect aflow experience $run --parent P --json", P=parent)
    staging = d.run("variants/aflow", "architect stage $run --parent P --json", P=parent)["staging"]
    d.write_proposal(staging, "explore  frontiers instead\nof following walls".replace("\n", " "), ["exploration"],
                     parent, "same idea again")
    dup = d.run("variants/aflow", "architect aflow duplicate $run STAGING --json", STAGING=staging)
    assert dup["duplicate"] is True and dup["resample"] is True and dup["matches"][0]["iteration"] == 1
    d.write_proposal(staging, "read the pose from a broken port", ["observation"], parent, "resampled")
    assert d.run("variants/aflow", "architect aflow duplicate $run STAGING --json", STAGING=staging)["duplicate"] is False
    check = _implement(d, staging, BROKEN, valid=False)
    assert check["violations"]
    d.run("implementer", 'architect discard $run $staging --reason "check: FIRST PROBLEM" --json', staging=staging)

    # experience: the committed child is accepted iff the paired test calls it better; the failed attempt is absent
    d.run("variants/aflow", "architect aflow experience $run --parent P --json", P=0)
    table = json.loads((run_dir / "memory" / "experience.json").read_text())
    rows = [json.loads(l) for l in (run_dir / "ledger.jsonl").read_text().splitlines()]
    verdict = rows[1]["vs_parent"]["verdict"]
    where = "success" if verdict == "better" else "failure"
    assert table["0"][where]["1"]["modification"] == "explore frontiers instead of following walls"
    assert table["0"][where]["1"]["verdict"] == verdict
    assert "broken port" not in (run_dir / "memory" / "experience.json").read_text()
    rendered = (run_dir / "memory" / "experience.md").read_text()
    assert "Do not repeat" in rendered and "explore frontiers" in rendered and "broken port" not in rendered
    assert [r["status"] for r in rows] == ["committed", "committed", "discarded"]
    assert len(git_log(run_dir)) >= 2

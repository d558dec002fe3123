"""ADAS end to end on the BabyAI executor: the exact command sequence of
loop.md → variants/adas.md → implementer.md → evaluator.md, with scripted
proposals, scripted reflexion answers and structured patches."""

import json
import re
from pathlib import Path

from variantkit import git_log

FITNESS = re.compile(r"^95% Bootstrap Confidence Interval: \(\d+\.\d%, \d+\.\d%\), Median: \d+\.\d%$")
GOOD = {"ops": [{"op": "retype_node", "id": "memory", "type": "babyai.FullMap", "config": {}}]}
BROKEN = {"ops": [{"op": "add_edge", "from": "perceive.nonexistent", "to": "stop.observation"}]}
UNBREAK = {"ops": [{"op": "remove_edge", "from": "perceive.nonexistent", "to": "stop.observation"}]}


def _patch(d, staging, ops, valid=True):
    """The implementer's structured-patch step; exit 1 when the result does not validate."""
    Path(staging, "edit.json").write_text(json.dumps(ops))
    return d.run("implementer",
                 "architect patch $staging/candidate/graph.json $staging/edit.json -o $staging/candidate/graph.json --json",
                 ok=valid, staging=staging)


def _reflexion(d, staging, k, description):
    """What the reflexion subagent writes; `adas revise` then applies the revision."""
    d.run("variants/adas", "architect adas history $run STAGING --json", STAGING=staging)
    history = Path(staging, "history.md").read_text()
    assert "archive.md" in history and (k == 1 or "## Reflexion round 1" in history)
    revised = f"---\ndescription: {description}\naxes: [memory/state]\nparent: 0\n---\nround {k}: keep the whole map\n"
    Path(staging, f"reflexion-{k}.md").write_text(f"## Critique\nround {k}\n\n## Revised proposal\n{revised}")
    applied = d.run("variants/adas", "architect adas revise $run STAGING --round k --json", STAGING=staging, k=k)
    assert applied["description"] == description and Path(staging, "proposal.md").read_text() == revised


def test_adas_iteration_end_to_end(driver):
    d = driver
    d.values.update({"$variant": "adas", "$executor": "babyai"})
    status = d.run("loop", "architect status $variant-$executor --json", ok=False)
    assert status["ok"] is False  # no run yet → create it
    d.run("loop", "architect init $variant $executor --run-id $variant-$executor OPTIONS --json")
    d.values["$run"] = "adas-babyai"
    run_dir = d.workdir / "runs" / "adas-babyai"

    # 1. the archive of every committed candidate (only the seed so far)
    archive = d.run("variants/adas", "architect adas archive $run --json")
    assert archive["entries"] == 1 and FITNESS.match(archive["fitness"]["0"])

    # 2–4. stage the best, propose, two reflexion rounds over one shared history
    staging = d.run("variants/adas", "architect stage $run --json")["staging"]
    d.write_proposal(staging, "full map instead of a sliding window", ["memory/state"], 0, "the window forgets rooms")
    _reflexion(d, staging, 1, "full map memory (revised once)")
    _reflexion(d, staging, 2, "full map memory (revised twice)")
    history = d.run("variants/adas", "architect adas history $run STAGING --json", STAGING=staging)
    assert history["reflexion_rounds"] == [1, 2] and history["next_round"] is None

    # 5. a broken edit fails the check: the error is recorded and fed back
    _patch(d, staging, BROKEN, valid=False)
    error = d.run("implementer", "architect check $run $staging --json", ok=False, staging=staging)
    Path(staging, "last-error.json").write_text(json.dumps(error))
    attempt = d.run("variants/adas", "architect adas debug $run STAGING --error-file STAGING/last-error.json --json",
                    STAGING=staging)
    assert attempt["attempt"] == 1 and attempt["retry"] is True
    d.run("variants/adas", "architect adas history $run STAGING --json", STAGING=staging)
    assert "nonexistent" in Path(staging, "history.md").read_text()
    _patch(d, staging, UNBREAK)
    _patch(d, staging, GOOD)
    d.run("implementer", "architect check $run $staging --json", staging=staging)
    d.run("implementer", "architect smoke $run $staging --json", staging=staging)

    # 6. evaluator: performance tier, ADAS fitness, commit (whatever the score)
    d.run("evaluator", "architect evaluate $run $staging --json", staging=staging)
    fitness = d.run("evaluator", "architect fitness $run $staging --json", staging=staging)
    assert FITNESS.match(fitness["text"])
    committed = d.run("evaluator", "architect commit $run $staging --json", staging=staging)
    assert committed["iteration"] == 1 and committed["axes"] == ["memory/state"]
    assert committed["description"] == "full map memory (revised twice)"
    iteration = run_dir / "iterations" / "1"
    for name in ("history.md", "reflexion-1.md", "reflexion-2.md", "debug.jsonl", "fitness.json", "proposal.md"):
        assert (iteration / name).is_file(), name

    # a second attempt that never gets past the check: 3 debug attempts, then discarded
    staging = d.run("variants/adas", "architect stage $run --json")["staging"]
    d.write_proposal(staging, "wire a missing port", ["topology"], 1, "bad idea")
    for k in range(3):
        _patch(d, staging, BROKEN if k == 0 else {"ops": []}, valid=False)  # repairs that do not help
        error = d.run("implementer", "architect check $run $staging --json", ok=False, staging=staging)
        Path(staging, "last-error.json").write_text(json.dumps(error))
        attempt = d.run("variants/adas",
                        "architect adas debug $run STAGING --error-file STAGING/last-error.json --json", STAGING=staging)
    assert attempt["give_up"] is True and attempt["attempt"] == 3
    d.run("variants/adas", 'architect discard $run STAGING --reason "adas: 3 debug attempts failed" --json',
          STAGING=staging)

    # the archive grows, nothing is removed, and the zero/low scorers stay in it
    archive = d.run("variants/adas", "architect adas archive $run --json")
    assert archive["entries"] == 2 and all(FITNESS.match(f) for f in archive["fitness"].values())
    entries = json.loads((run_dir / "memory" / "archive.json").read_text())
    assert {"op": "retype_node", "id": "memory", "type": "babyai.FullMap", "config": {}} in entries[1]["graph_diff"]
    assert entries[0]["graph"]["nodes"]["memory"]["type"] == "babyai.WindowMap"
    rows = [json.loads(l) for l in (run_dir / "ledger.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["committed", "committed", "discarded"]
    assert rows[2]["reason"] == "adas: 3 debug attempts failed"
    assert git_log(run_dir)[0].startswith("iteration 1:") and len(git_log(run_dir)) >= 2

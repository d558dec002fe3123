"""KDLoop end to end on the BabyAI executor: one full iteration of
variants/kdloop.md (THINK → CRITIC → EXPERIMENT with three slots → DISTILL),
then an empty THINK that triggers REFLECT, which ends the run."""

import json
import subprocess
from pathlib import Path

from variantkit import git_log

SPECS = [
    {"id": "fullmap", "description": "remember the whole level", "axes": ["memory/state"],
     "hypothesis": "h1: forgetting rooms causes revisits",
     "patch": {"ops": [{"op": "retype_node", "id": "memory", "type": "babyai.FullMap", "config": {}}]}},
    {"id": "verify", "description": "verify before saying done", "axes": ["stopping"],
     "hypothesis": "premature done",
     "patch": {"ops": [{"op": "retype_node", "id": "stop", "type": "babyai.VerifyStop", "config": {}}]}},
    {"id": "broken", "description": "pose from a missing port", "axes": ["topology"],
     "hypothesis": "none", "patch": {"ops": [{"op": "add_edge", "from": "pose.nonexistent", "to": "act.pose"}]}},
]


def test_kdloop_iteration_end_to_end(driver, monkeypatch, tmp_path_factory):
    d = driver
    elsewhere = tmp_path_factory.mktemp("elsewhere")  # runs outside the working folder: the skills ask status
    monkeypatch.setenv("ARCHITECT_RUNS_DIR", str(elsewhere))
    d.values.update({"$variant": "kdloop", "$executor": "babyai", "OPTIONS": "--max-iterations 3"})
    d.run("loop", "architect init $variant $executor --run-id $variant-$executor OPTIONS --json")
    d.values["$run"] = "kdloop-babyai"
    status = d.run("loop", "architect status $variant-$executor --json")
    run_dir = Path(status["run"])
    d.values["RUN_DIR"] = str(run_dir)
    assert run_dir.parent == elsewhere.resolve() and not (d.workdir / "runs").exists()
    assert status["iteration_cap"]["cap"] == 3
    memory = run_dir / "memory"
    assert status["state"]["next_iteration"] == 1 and status["stop_requested"] is False

    # 0–1
    d.run("variants/kdloop", "architect kdloop init $run --json")
    assert (run_dir / "goal.md").is_file()
    assert d.run("variants/kdloop", "architect kdloop reflect-due $run --json")["due"] is False

    # 2. THINK: three axis-tagged specs on parent 0, one new hypothesis
    specs_path = memory / "specs" / "1.json"
    specs_path.write_text(json.dumps({"iteration": 1, "parent": 0, "specs": SPECS}))
    d.run("variants/kdloop", "architect kdloop append $run hypotheses --text '{\"id\": \"h4\", \"statement\": \"...\", "
          "\"axes\": [\"planning\"], \"status\": \"open\"}' --json")
    think = d.run("variants/kdloop", "architect kdloop specs $run RUN_DIR/memory/specs/N.json --json", N=1)
    assert think["specs"] == 3 and think["slots"] == {"1": "fullmap", "2": "verify", "3": "broken"}

    # 3. CRITIC patches the specs in place, then they are re-validated
    doc = json.loads(specs_path.read_text())
    doc["specs"][2]["critic"] = "vague: which port? kept to show a failing slot"
    doc["critic"] = "1 note"
    specs_path.write_text(json.dumps(doc))
    d.run("variants/kdloop", "architect kdloop specs $run RUN_DIR/memory/specs/N.json --stage critic --json", N=1)

    # 4. EXPERIMENT: one slot per spec on the same parent
    slots = {}
    for k, spec in enumerate(SPECS, start=1):
        staging = d.run("variants/kdloop", "architect stage $run --parent P --slot k --json", P=0, k=k)["staging"]
        assert staging.endswith(f"/staging/1-{k}")
        slot = d.run("variants/kdloop", "architect kdloop slot $run RUN_DIR/memory/specs/N.json S_k --json",
                     N=1, S_k=staging)
        assert slot["spec_id"] == spec["id"] and json.loads(Path(slot["edit"]).read_text()) == spec["patch"]
        front = Path(staging, "proposal.md").read_text()
        assert f"description: {spec['description']}" in front and "parent: 0" in front and spec["hypothesis"] in front
        valid = spec["id"] != "broken"
        d.run("implementer",
              "architect patch $staging/candidate/graph.json $staging/edit.json -o $staging/candidate/graph.json --json",
              ok=valid, staging=staging)
        d.run("implementer", "architect check $run $staging --json", ok=valid, staging=staging)
        if valid:
            d.run("implementer", "architect smoke $run $staging --json", staging=staging)
        slots[k] = staging
    evaluated = d.run("variants/kdloop", "architect kdloop evaluate $run S_1 S_2 --json", S_1=slots[1], S_2=slots[2])
    assert [s["passed"] for s in evaluated["slots"]] == [True, True] and evaluated["concurrent"] >= 1
    assert "slot" in evaluated["why"] and "core" in evaluated["why"]
    pick = d.run("variants/kdloop",
                 "architect kdloop pick $run RUN_DIR/memory/specs/N.json S_1 S_2 S_3 --json",
                 N=1, S_1=slots[1], S_2=slots[2], S_3=slots[3])
    scores = {s["slot"]: s["score"] for s in pick["slots"]}
    best_slot = pick["best"].rsplit("-", 1)[1]
    assert pick["best"] == slots[int(best_slot)] and scores["3"] is None
    assert pick["vs_runner_up"]["verdict"] in ("better", "indistinguishable")
    assert pick["near_tie"] == (pick["vs_runner_up"]["verdict"] == "indistinguishable")
    assert pick["vs_runner_up"]["runner_up"].endswith(f"-{pick['vs_runner_up']['runner_up_slot']}")
    assert pick["best_vs_parent"]["shared"] > 0
    d.run("variants/kdloop", "architect fitness $run S_best --json", S_best=pick["best"])
    committed = d.run("variants/kdloop", "architect commit $run S_best --json", S_best=pick["best"])
    for other in pick["discard"]:
        d.run("variants/kdloop", 'architect discard $run S_k --reason "kdloop: not the best slot" --json', S_k=other)
    assert committed["iteration"] == 1 and committed["slot"] == best_slot
    assert committed["axes"] == SPECS[int(best_slot) - 1]["axes"]
    # the ledger keeps the paired verdict against the parent that `best` ranks by
    assert committed["vs_parent"]["verdict"] == pick["best_vs_parent"]["verdict"]
    assert committed["vs_parent"]["shared"] == pick["best_vs_parent"]["shared"]

    experience = [json.loads(l) for l in (memory / "experience.jsonl").read_text().splitlines()]
    assert [(r["slot"], r["outcome"]) for r in experience] == [
        ("1", "committed" if best_slot == "1" else "evaluated"),
        ("2", "committed" if best_slot == "2" else "evaluated")]  # the failed slot enters no memory
    assert all(r["verdict"] in ("better", "worse", "indistinguishable") for r in experience)
    # memory written before the commit is part of the iteration's git commit
    shown = subprocess.run(["git", "-C", str(run_dir), "show", "HEAD:memory/experience.jsonl"],
                           capture_output=True, text=True, check=True).stdout
    assert len(shown.splitlines()) == 2

    # the best slot's row read `picked` in the iteration's commit and `committed` once it succeeded
    at_commit = subprocess.run(["git", "-C", str(run_dir), "show", f"{committed['commit']}:memory/experience.jsonl"],
                               capture_output=True, text=True, check=True).stdout
    assert [json.loads(l)["outcome"] for l in at_commit.splitlines()][int(best_slot) - 1] == "picked"

    # 5. DISTILL: a lesson, and the tested hypothesis updated by its id
    d.run("variants/kdloop", 'architect kdloop append $run knowledge --text "..." --json')
    updated = d.run("variants/kdloop", 'architect kdloop hypothesis update $run h4 --status supported '
                    '--evidence "iteration N slot k: +6/−1, better" --iteration N --json', N=1, k=best_slot)
    assert updated["after"]["status"] == "supported" and updated["after"]["iteration"] == 1
    hyps = [json.loads(l) for l in (memory / "hypotheses.jsonl").read_text().splitlines()]
    assert [(h["id"], h["status"]) for h in hyps] == [("h4", "supported")]

    rows = [json.loads(l) for l in (run_dir / "ledger.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["committed", "committed", "discarded", "discarded"]
    assert {r["reason"] for r in rows[2:]} == {"kdloop: not the best slot"}
    # the losing slot is archived and committed, not a skip; nor is the failed slot of a committed iteration
    lost_slot = str(3 - int(best_slot))
    lost = [r for r in rows if r.get("lost_slot")]
    assert [r["archived"] for r in lost] == [f"slots/1-{lost_slot}"]
    archived = run_dir / "slots" / f"1-{lost_slot}"
    for name in ("proposal.md", "patch.json", "diff.txt", "candidate/graph.json", "eval/metrics.json"):
        assert (archived / name).is_file(), name
    assert json.loads((archived / "patch.json").read_text())["ops"]
    loser = d.run("variants/kdloop", "architect episodes $run slots/N-k --json", **{"N-k": f"1-{lost_slot}"})
    assert loser["a"] == "iteration 0" and loser["b"] == f"archived slot 1-{lost_slot}" and loser["shared"] > 0
    assert json.loads((run_dir / "state.json").read_text())["consecutive_skips"] == 0
    assert any(line.startswith("iteration 1:") for line in git_log(run_dir))
    assert f"slot 1-{lost_slot} archived" in " ".join(git_log(run_dir))

    # iteration 2: an empty THINK fires REFLECT, whose audit ends the run
    (memory / "specs" / "2.json").write_text(json.dumps({"iteration": 2, "parent": 1, "specs": []}))
    assert d.run("variants/kdloop", "architect kdloop specs $run RUN_DIR/memory/specs/N.json --json", N=2)["empty"]
    due = d.run("variants/kdloop", "architect kdloop reflect-due $run --json")
    assert due["due"] and due["reasons"] == ["empty_think"]
    coverage = d.run("variants/kdloop", "architect kdloop coverage $run --json")
    assert "planning" in coverage["untried"]
    tried = {axis for spec in SPECS[:2] for axis in spec["axes"]}
    assert all(coverage["axes"][axis]["experiments"] >= 1 for axis in tried)
    d.run("variants/kdloop", 'architect kdloop append $run search_space --text "..." --json')
    d.run("variants/kdloop", 'architect kdloop stop $run --reason "THINK found nothing left to try" --json')
    d.run("variants/kdloop", 'architect kdloop reflected $run --note "one line" --json')
    assert d.run("variants/kdloop", "architect kdloop reflect-due $run --json")["due"] is False
    assert (run_dir / "STOP").read_text() == "kdloop: THINK found nothing left to try\n"
    status = d.run("loop", "architect status $variant-$executor --json")
    assert status["stop_requested"] is True and status["committed"] == [0, 1] and status["staged"] == []

"""init + the offline random loop on the real BabyAI executor: one git commit
per iteration, complete iteration folders, ledger/state/status agreement,
reproducibility, reruns."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rundir_kit import cli, git, iteration_commits

from harness.rundir.certify import render as certify_text
from harness.schemas import validate_instance

ITERATION_FILES = ["candidate/graph.json", "proposal.md", "patch.json", "diff.txt", "stage.json", "check.json",
                   "smoke/metrics.json", "smoke/verdict.json", "eval/metrics.json", "eval/verdict.json"]


def test_init_commits_iteration_zero(base_run: Path):
    assert iteration_commits(base_run) == [0]
    manifest = json.loads((base_run / "manifest.json").read_text())
    assert manifest["variant"] == "random" and manifest["executor"] == "babyai"
    assert manifest["caps"] == {"max_iterations": 40, "max_consecutive_skips": 10, "smoke_episodes": 2, "eval_episodes": 3}
    tracked = set(git(base_run, "ls-files").split())
    for name in ["manifest.json", "state.json", "ledger.jsonl", "goal.md", "iterations/0/candidate/graph.json",
                 "iterations/0/check.json",
                 "iterations/0/eval/metrics.json", "iterations/0/smoke/metrics.json", ".gitignore"]:
        assert name in tracked, name
    metrics = json.loads((base_run / "iterations/0/eval/metrics.json").read_text())
    assert metrics["n_episodes"] == 3
    assert (base_run / ".gitignore").read_text().startswith("staging/")


def test_loop_commits_one_git_commit_per_iteration_with_complete_folders(run_dir: Path):
    out = cli("loop", "random", "babyai", "--run-id", run_dir.name, "--runs-dir", str(run_dir.parent),
              "--resume", "--iterations", "3")
    assert out["stop_reason"] == "iterations_done"
    committed = [r["iteration"] for r in out["rows"] if r["status"] == "committed"]
    assert committed == [0, 1, 2, 3]
    assert iteration_commits(run_dir) == committed
    # one commit per iteration, the loop's end (final state), then the certification: the run is clean
    subjects = git(run_dir, "log", "--format=%s").splitlines()
    assert len(subjects) == 6 and subjects[1] == "loop stopped: iterations_done"
    assert subjects[0].startswith("certification: best iteration")
    assert git(run_dir, "status", "--porcelain").strip() == ""
    cert = json.loads((run_dir / "certification.json").read_text())
    assert validate_instance("certification", cert) == [] and cert == {k: v for k, v in out["certification"].items()
                                                                       if k != "path"}
    assert cert["best"] == out["best"]["iteration"] and len(cert["reruns"]["baseline"]["draws"]) == 3
    assert cert["reruns"]["episodes"] == 3  # each rerun's: the run's --eval-episodes
    assert cert["reruns"]["delta"] == pytest.approx(cert["reruns"]["best"]["mean"] - cert["reruns"]["baseline"]["mean"])
    # the BabyAI graphs are deterministic: two reruns tell, and the reported ones run on fresh episodes
    assert cert["deterministic"] is True and cert["reruns"]["episode_seeds"] == "fresh" and "fresh" in cert["note"]
    probe = cert["reruns"]["probe"]  # the two identical draws on the tier's episodes that decided it stay on record
    assert probe["episode_seeds"] == "the tier's" and len(probe["baseline"]) == len(probe["best"]) == 2
    assert probe["baseline"][0] == probe["baseline"][1] and "determinism probe" in certify_text(cert)
    assert cert["holdout"]["tier"] == "holdout" and cert["holdout"]["episodes"] == 3  # the run's --eval-episodes
    assert cert["holdout"]["verdict"] in ("better", "worse", "indistinguishable")
    # holdout figures reach no proposer: nothing under memory/, iterations/ or the ledger mentions them
    for path in [run_dir / "ledger.jsonl", *run_dir.glob("memory/**/*"), *run_dir.glob("iterations/*/proposal.md")]:
        assert not path.is_file() or "holdout" not in path.read_text(), path
    assert json.loads(git(run_dir, "show", "HEAD:state.json"))["status"] == "stopped"
    for n in committed[1:]:
        folder = run_dir / "iterations" / str(n)
        for name in ITERATION_FILES:
            assert (folder / name).is_file(), f"iterations/{n}/{name} missing"
        assert list((folder / "eval" / "episodes").glob("*.jsonl")), "per-episode logs missing"
        patch = json.loads((folder / "patch.json").read_text())
        assert patch["ops"], "the structured patch against the parent is empty"
        assert (folder / "diff.txt").read_text().startswith("--- a/graph.json")
        # the candidate committed is the one that was evaluated
        verdict = json.loads((folder / "eval/verdict.json").read_text())
        row = next(r for r in out["rows"] if r["iteration"] == n and r["status"] == "committed")
        assert verdict["candidate_hash"] == row["candidate_hash"]
        assert row["axes"] and row["smoke"]["passed"] and row["primary"]["mean"] is not None
    assert git(run_dir, "status", "--porcelain", "--", "iterations").strip() == ""
    status = cli("status", str(run_dir))
    assert status["consistent"], status["problems"]
    assert status["state"]["next_iteration"] == 4 and status["state"]["status"] == "stopped"
    log = cli("log", str(run_dir))
    assert [r["attempt"] for r in log["rows"]] == list(range(len(log["rows"])))
    assert log["axis_share"] is None or 0 < log["axis_share"]["share"] <= 1


def test_random_loop_is_reproducible_with_its_seed(base_run: Path, tmp_path: Path):
    rows = []
    for name in ("a", "b"):
        shutil.copytree(base_run, tmp_path / name)
        out = cli("loop", "random", "babyai", "--run-id", name, "--runs-dir", str(tmp_path), "--resume",
                  "--iterations", "1", "--seed", "11", "--no-certify")
        rows.append([(r["status"], r["description"], r.get("candidate_hash")) for r in out["rows"]])
    assert rows[0] == rows[1] and len(rows[0]) >= 2


def test_rerun_records_draws_in_the_iteration_and_commits_them(run_dir: Path):
    out = cli("rerun", str(run_dir), "--iter", "0", "--times", "2")
    assert len(out["draws"]) == 2 and out["sd"] >= 0
    assert out["mean"] == sum(d["mean"] for d in out["draws"]) / 2
    saved = json.loads((run_dir / "iterations/0/reruns.json").read_text())
    assert saved["draws"] == out["draws"]
    assert "Architect-Rerun: 0" in git(run_dir, "log", "-1", "--format=%B")
    assert git(run_dir, "status", "--porcelain").strip() == ""
    assert iteration_commits(run_dir) == [0]  # a rerun is not an iteration
    assert cli("status", str(run_dir))["consistent"]


def test_reruns_evaluate_the_profiles_rerun_tier(run_dir: Path):
    """A profile's `rerun_tier` (recorded in the manifest by init) is what rerun and
    certification re-evaluate; without one, the performance tier."""
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert "rerun_tier" not in manifest["profiles"]  # babyai's profile names none
    manifest["profiles"]["rerun_tier"] = "search-hard"
    manifest_path.write_text(json.dumps(manifest, indent=2))
    git(run_dir, "commit", "-qam", "rerun on search-hard")
    out = cli("rerun", str(run_dir), "--iter", "0", "--times", "1")
    assert out["tier"] == "search-hard"
    assert json.loads((run_dir / "iterations/0/reruns.json").read_text())["tier"] == "search-hard"


def test_parallel_slots_evaluate_side_by_side_and_commit_as_successive_iterations(run_dir: Path):
    import subprocess

    from rundir_kit import ARCHITECT
    from harness.canvas.patch import apply_patch

    slots = {}
    for slot, value in (("a", "left"), ("b", "right")):
        staging = Path(cli("stage", str(run_dir), "--slot", slot)["staging"])
        assert staging.name == f"1-{slot}"
        graph_path = staging / "candidate" / "graph.json"
        edit = {"ops": [{"op": "set_config", "id": "commit", "pointer": "/idle_action", "value": value}]}
        graph_path.write_text(json.dumps(apply_patch(json.loads(graph_path.read_text()), edit)))
        assert cli("check", str(run_dir), str(staging))["ok"]
        slots[slot] = staging
    # both slots' smoke + evaluation run at the same time: each locks only its own folder
    procs = [subprocess.Popen(ARCHITECT + ["smoke", str(run_dir), str(s), "--json"], stdout=subprocess.PIPE, text=True)
             for s in slots.values()]
    assert all(json.loads(p.communicate(timeout=120)[0])["passed"] for p in procs)
    for staging in slots.values():
        assert cli("evaluate", str(run_dir), str(staging))["passed"]
    first = cli("commit", str(run_dir), str(slots["a"]), "--description", "idle left")
    second = cli("commit", str(run_dir), str(slots["b"]), "--description", "idle right")
    assert (first["iteration"], first["parent"], first["slot"]) == (1, 0, "a")
    assert (second["iteration"], second["parent"], second["slot"]) == (2, 0, "b")
    assert iteration_commits(run_dir) == [0, 1, 2]
    assert cli("status", str(run_dir))["consistent"]


def test_caps_stop_the_loop_and_the_state_says_why(run_dir: Path):
    from harness.errors import UserError
    from harness.rundir.layout import RunPaths
    from harness.rundir.loop import Progress, run_loop
    from harness.rundir.records import read_record, write_record

    def failing_proposer(staging, seed, attempt, seen):
        raise UserError(f"no idea #{attempt}")

    paths = RunPaths(run_dir.resolve())
    out = run_loop(paths, target=None, seed=0, show=Progress(enabled=False), propose=failing_proposer)
    assert out["stop_reason"] == "max_consecutive_skips"
    assert [r["status"] for r in out["rows"]] == ["committed"] + ["discarded"] * 10
    assert out["rows"][-1]["reason"] == "proposer: no idea #10"
    assert out["state"]["consecutive_skips"] == 10 and out["state"]["next_iteration"] == 1

    manifest = read_record("manifest", paths.manifest)
    manifest["caps"]["max_iterations"] = 0
    write_record("manifest", paths.manifest, manifest)
    out = run_loop(paths, target=5, seed=0, show=Progress(enabled=False), propose=failing_proposer)
    assert out["stop_reason"] == "max_iterations" and len(out["rows"]) == 11
    status = cli("status", str(run_dir))
    assert status["state"]["stop_reason"] == "max_iterations" and status["consistent"]

"""`architect loop shaper babyai-llm` end to end with the scripted stand-ins (they
answer on a loopback server and say so): both stages, one run-directory
iteration per evaluated proposal, the beam file, the sandbox repair, costs in the
ledger, the final ablation table, and abort + resume after an endpoint outage
giving the same final beam. A small schedule (2 rounds, beam 2, branching 2,
2-episode splits) keeps it short; the default is the study's."""

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.cli import main  # noqa: E402
from harness.models.client import BASE_URL_ENV  # noqa: E402
from harness.rundir.records import read_record  # noqa: E402
from harness.variants.shaper.models import InfrastructureFailure  # noqa: E402
from harness.variants.shaper.runner import run_headless  # noqa: E402
from shaperkit import BreakableStandIns, write_config  # noqa: E402

@pytest.fixture(scope="module")
def stand_ins():
    with BreakableStandIns() as server:
        patch = pytest.MonkeyPatch()
        patch.setenv(BASE_URL_ENV, server.openai_url)  # --scripted-models uses the running stand-ins
        yield server
        patch.undo()


@pytest.fixture(scope="module")
def reference(stand_ins, tmp_path_factory):
    folder = tmp_path_factory.mktemp("shaper")
    config, _ = write_config(folder)
    runs = folder / "runs"
    result = CliRunner().invoke(main, ["loop", "shaper", "babyai-llm", "--scripted-models", "--config", str(config),
                                       "--run-id", "ref", "--runs-dir", str(runs), "--json"])
    assert result.exit_code == 0, result.output
    return {"folder": folder, "config": config, "runs": runs, "summary": json.loads(result.stdout.splitlines()[-1]),
            "root": runs / "ref"}


def _beam(root):
    return read_record("shaper_beam", root / "memory" / "shaper" / "beam.json")


def _rows(root):
    return [json.loads(line) for line in (root / "ledger.jsonl").read_text().splitlines()]


def test_both_stages_complete_and_each_evaluated_proposal_is_one_iteration(reference):
    summary, root = reference["summary"], reference["root"]
    beam = _beam(root)
    assert summary["stop_reason"] == "schedule_done" and beam["phase"] == "done"
    assert [r["stage"] for r in beam["rounds"]] == ["skill", "harness"]
    assert beam["selected"]["skill"] and beam["selected"]["harness"]
    committed = [p for p in beam["proposals"] if p["status"] == "committed"]
    rows = _rows(root)
    shaper_rows = [r for r in rows if r["status"] == "committed" and r.get("shaper")]
    assert sorted(r["shaper"]["proposal"] for r in shaper_rows) == sorted(p["id"] for p in committed)
    assert len(rows) - 1 == len([p for p in beam["proposals"] if p["status"] != "duplicate"])
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["caps"]["max_iterations"] == 4 and manifest["profiles"]["performance_tier"] == "shaper_val"
    git_log = subprocess.run(["git", "-C", str(root), "log", "--format=%s"], capture_output=True, text=True).stdout
    assert sum(line.startswith("iteration ") for line in git_log.splitlines()) == len(committed) + 1
    assert subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True,
                          text=True).stdout == ""


def test_the_beam_file_keeps_width_and_marks_incumbents(reference):
    beam = _beam(reference["root"])
    for entry in beam["rounds"]:
        assert 1 <= len(entry["beam_after"]) <= 2
        for row in entry["beam_after"]:
            assert row["incumbent"] == (row["candidate"] in entry["beam_before"])
            assert set(row["regression"]) >= {"categories", "regressed", "refused"}
    seed_id = next(c for c, v in beam["candidates"].items() if v["stage"] == "seed")
    assert seed_id in [row["candidate"] for row in beam["rounds"][0]["beam_after"]] or \
        beam["rounds"][0]["beam_after"][0]["mean_reward"] >= beam["candidates"][seed_id]["mean_reward"]
    assert len(beam["seen"]) == len(set(beam["seen"]))


def test_stages_are_frozen_in_the_committed_iterations(reference):
    root = reference["root"]
    beam = _beam(root)
    for p in beam["proposals"]:
        if p["status"] != "committed":
            continue
        parent = root / "iterations" / str(beam["candidates"][p["parent"]]["iteration"]) / "candidate"
        child = root / "iterations" / str(p["iteration"]) / "candidate"
        frozen = "build_context.py" if p["stage"] == "skill" else "skill.md"
        assert (parent / frozen).read_text() == (child / frozen).read_text()


def test_a_harness_proposal_importing_os_was_rejected_and_repaired_once(reference):
    beam = _beam(reference["root"])
    repaired = [p for p in beam["proposals"] if p["stage"] == "harness" and p["rejections"]]
    assert repaired and all(len(p["rejections"]) == 1 and p["status"] == "committed" for p in repaired)
    assert any("imports are not allowed" in problem for p in repaired for problem in p["rejections"][0])
    proposal_md = (reference["root"] / "iterations" / str(repaired[0]["iteration"]) / "proposal.md").read_text()
    assert "The sandbox rejected 1 attempt(s)" in proposal_md


def test_costs_per_round_and_in_total_are_in_the_ledger(reference):
    root = reference["root"]
    beam = _beam(root)
    rows = [r for r in _rows(root) if r.get("shaper")]
    totals = [r["shaper"]["total_cost_usd"] for r in rows]
    assert totals == sorted(totals) and totals[-1] > 0
    for r in rows:
        assert 0 < r["shaper"]["round_cost_usd"] <= beam["costs"]["by_round"][str(r["shaper"]["round"])] + 1e-9
    assert beam["costs"]["total_usd"] == pytest.approx(sum(beam["costs"]["by_round"].values()))
    out = CliRunner().invoke(main, ["shaper", "costs", str(root), "--json"])
    assert json.loads(out.stdout)["total_usd"] == beam["costs"]["total_usd"]


def test_the_final_evaluation_reports_baselines_and_ablations_with_paired_verdicts(reference):
    memory = reference["root"] / "memory" / "shaper"
    final = read_record("shaper_final", memory / "final.json")
    [split] = final["splits"]
    assert split["split"] == "test" and split["tier"] == "shaper_test" and split["episodes"] == 2
    assert [r["configuration"] for r in split["rows"]] == ["seed", "MG-Select-like", "VOTE-like", "skill only",
                                                           "harness only", "both"]
    assert all(r["vs_seed"]["episodes"] == 2 for r in split["rows"])
    # the scripted planner answers every sample alike, so test-time scaling changes nothing offline
    assert [r["mean_reward"] for r in split["rows"][:3]] == [split["rows"][0]["mean_reward"]] * 3
    assert "| both | evolved | evolved |" in (memory / "final.md").read_text()


def test_abort_on_an_outage_and_resume_give_the_same_final_beam(reference, stand_ins):
    runs = reference["runs"]
    from harness.variants.shaper.config import build_config, read_config_file

    # the final test comes after the search: these runs compare the beam only, so they leave it out
    config = dataclasses.replace(build_config(read_config_file(reference["config"]), scripted_models=True),
                                 final_test=False)
    stand_ins.fail_from = stand_ins.optimizer_calls + 3  # round 1 makes 2 optimizer calls; round 2 fails
    try:
        with pytest.raises(InfrastructureFailure, match="optimizer model call failed"):
            run_headless("babyai-llm", runs_dir=runs, run_id="outage", config=config)
    finally:
        stand_ins.fail_from = None
    stopped = _beam(runs / "outage")
    assert stopped["phase"] == "search" and stopped["round"] == 2
    state = json.loads((runs / "outage" / "state.json").read_text())
    assert "infrastructure failure" in state["stop_reason"]
    resumed = run_headless("babyai-llm", runs_dir=runs, run_id="outage", resume=True)
    assert resumed["stop_reason"] == "schedule_done"
    after, ref = _beam(runs / "outage"), _beam(reference["root"])
    assert after["beam"] == ref["beam"] and after["selected"] == ref["selected"]
    assert sorted(after["candidates"]) == sorted(ref["candidates"])
    assert [e["beam_after"] for e in after["rounds"]] == [e["beam_after"] for e in ref["rounds"]]


def test_a_loop_interrupted_inside_a_git_commit_commits_no_half_iteration(reference, tmp_path, monkeypatch):
    """Ctrl-C while `git commit` runs for the first evaluated proposal: the commit of SHAPER's
    memory on the way out must not take the uncommitted iterations/1 folder in with it."""
    from harness.rundir import gitops
    from harness.variants.shaper.config import build_config, read_config_file

    config = dataclasses.replace(build_config(read_config_file(reference["config"]), scripted_models=True),
                                 final_test=False)

    commit_iteration = gitops.commit_iteration

    def add_then_interrupt(root, iteration, subject, paths):
        if iteration == 0:  # the run's creation
            return commit_iteration(root, iteration, subject, paths)
        gitops.git(root, "add", "-A", "--", *paths)
        raise KeyboardInterrupt

    monkeypatch.setattr(gitops, "commit_iteration", add_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        run_headless("babyai-llm", runs_dir=tmp_path, run_id="cut", config=config)
    monkeypatch.undo()
    root = tmp_path / "cut"
    assert gitops.git(root, "ls-tree", "-d", "--name-only", "HEAD", "iterations/").split() == ["iterations/0"]
    code, status = _cli("status", str(root))
    assert code == 0 and status["consistent"] and status["recovered"] == [], status["problems"]
    assert status["committed"] == [0] and status["state"]["status"] == "stopped"


def test_a_loop_killed_mid_round_resumes_to_the_same_final_beam(reference, stand_ins, tmp_path):
    runs = reference["runs"]
    config, _ = write_config(tmp_path, final_test=False)  # the reference's schedule, no final test (not compared)
    command = [sys.executable, "-c", "from harness.cli import main; main()", "loop", "shaper", "babyai-llm",
               "--scripted-models", "--config", str(config),
               "--run-id", "killed", "--runs-dir", str(runs), "--json"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
    stand_ins.kill_pid, stand_ins.kill_at = proc.pid, stand_ins.optimizer_calls + 3  # round 2's first proposal
    try:
        proc.communicate(timeout=600)
    finally:
        stand_ins.kill_at = None
    assert proc.returncode == -signal.SIGKILL
    assert _beam(runs / "killed")["round"] == 2  # killed inside round 2
    resumed = run_headless("babyai-llm", runs_dir=runs, run_id="killed", resume=True)
    assert resumed["stop_reason"] == "schedule_done"
    after, ref = _beam(runs / "killed"), _beam(reference["root"])
    assert after["beam"] == ref["beam"] and after["selected"] == ref["selected"]
    assert [e["beam_after"] for e in after["rounds"]] == [e["beam_after"] for e in ref["rounds"]]


def test_resume_of_a_finished_or_missing_run_and_bad_options_fail_cleanly(reference, tmp_path):
    out = CliRunner().invoke(main, ["loop", "shaper", "babyai-llm", "--resume", "--run-id", "nope",
                                    "--runs-dir", str(reference["runs"]), "--json"])
    assert out.exit_code != 0 and "no run nope" in json.loads(out.stdout)["error"]
    out = CliRunner().invoke(main, ["loop", "random", "babyai", "--scripted-models", "--json"])
    assert out.exit_code != 0 and "options of variants with a headless driver" in json.loads(out.stdout)["error"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("beam: 3\n")
    out = CliRunner().invoke(main, ["loop", "shaper", "babyai-llm", "--config", str(bad), "--runs-dir",
                                    str(tmp_path), "--json"])
    assert out.exit_code != 0 and "unknown key(s) beam" in json.loads(out.stdout)["error"]
    out = CliRunner().invoke(main, ["loop", "shaper", "babyai-llm", "--scripted-models", "--dry-run", "--runs-dir",
                                    str(tmp_path), "--json"])
    assert out.exit_code != 0 and "has no dry run; nothing was run" in json.loads(out.stdout)["error"]
    assert not any(tmp_path.glob("shaper-*"))


def _cli(*args):
    result = CliRunner().invoke(main, [*args, "--json"])
    return result.exit_code, json.loads(result.stdout.splitlines()[-1])


def test_the_skill_helpers_drive_a_round_with_agent_written_texts(reference, tmp_path):
    """What the coding agent does in .claude/commands/architect/variants/shaper.md, with fixed texts."""
    config, _ = write_config(tmp_path, final_test=False)
    runs = str(tmp_path / "runs")
    code, made = _cli("shaper", "init", "babyai-llm", "--config", str(config), "--run-id", "skill", "--runs-dir", runs)
    assert code == 0 and made["cap"] == 4 and made["next"] == "gradient"
    run = made["run"]
    code, status = _cli("shaper", "status", run)
    assert status["next"] == "gradient" and status["stage"] == "skill"
    parent = status["beam"][0]["candidate"]
    code, batch = _cli("shaper", "minibatch", run, "--candidate", parent)
    assert code == 0 and len(batch["minibatch"]) == 2
    judgements = {e: [{"step": i + 1, "verdict": "progress", "note": "moved"} for i in range(n)]
                  for e, n in batch["steps_to_judge"].items()}
    (tmp_path / "j.json").write_text(json.dumps(judgements))
    (tmp_path / "s.json").write_text(json.dumps({e: "reached the goal" for e in batch["minibatch"]}))
    code, gradient = _cli("shaper", "gradient", run, "--candidate", parent, "--judgements", str(tmp_path / "j.json"),
                          "--summaries", str(tmp_path / "s.json"))
    assert code == 0 and gradient["stats"]["episodes"] == 2
    skill = tmp_path / "skill.txt"
    skill.write_text((Path(run) / "iterations/0/candidate/skill.md").read_text() + "- Say the colour.\n")
    for branch in ("1", "2"):  # the same text twice: the second is an exact duplicate
        code, out = _cli("shaper", "propose", run, "--parent", parent, "--branch", branch, "--file", str(skill))
        assert code == 0
    code, validated = _cli("shaper", "validate", run)
    assert [p["status"] for p in validated["proposals"]] == ["committed", "duplicate"]
    code, advanced = _cli("shaper", "advance", run)
    assert code == 0 and advanced["next"] == "gradient" and len(advanced["beam"]) == 1
    parent = advanced["beam"][0]
    code, batch = _cli("shaper", "minibatch", run, "--candidate", parent)
    code, gradient = _cli("shaper", "gradient", run, "--candidate", parent, "--judgements", str(tmp_path / "j.json"),
                          "--summaries", str(tmp_path / "s.json"))
    history = Path(gradient["history"]).read_text().splitlines()  # round 1, as the headless optimizer is told it
    assert history[0].startswith("r1-") and "validation mean reward" in history[0]
    assert "exact duplicate" in history[1] and history[2].startswith("round 1 (skill): beam kept ")
    harness = tmp_path / "harness.txt"
    harness.write_text("import os\ndef build_context(history):\n    return 'Subgoals completed so far: 0'\n")
    code, rejected = _cli("shaper", "propose", run, "--parent", parent, "--branch", "1", "--file", str(harness))
    assert code == 1 and not rejected["ok"] and "imports are not allowed" in " ".join(rejected["problems"])
    (tmp_path / "rejected.json").write_text(json.dumps(rejected))
    code, again = _cli("shaper", "propose", run, "--parent", parent, "--branch", "1", "--file", str(harness),
                       "--rejected", str(tmp_path / "rejected.json"))
    assert code == 0 and again["proposal"]["status"] == "rejected" and len(again["proposal"]["rejections"]) == 2
    harness.write_text("def build_context(history):\n    return 'Subgoals completed so far: %d' % len(history)\n")
    code, fine = _cli("shaper", "propose", run, "--parent", parent, "--branch", "2", "--file", str(harness))
    assert fine["proposal"]["status"] == "proposed"
    code, validated = _cli("shaper", "validate", run)
    assert [p["status"] for p in validated["proposals"]] == ["rejected", "committed"]
    code, advanced = _cli("shaper", "advance", run)
    assert advanced["next"] == "final"
    code, final = _cli("shaper", "final", run)
    assert code == 0 and final["splits"] is None
    code, status = _cli("shaper", "status", run)
    assert status["next"] == "done" and status["selected"]["harness"]
    rows = [json.loads(line) for line in (Path(run) / "ledger.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["committed", "committed", "discarded", "committed"]
    assert "sandbox" in rows[2]["reason"]


def test_the_skill_helpers_run_offline_with_scripted_models(tmp_path):
    """No model endpoint: `shaper init --scripted-models` records it, and each command that rolls
    out episodes starts the executor's stand-in planner itself (separate processes, as the skill runs
    them). Without it, init says how to run offline."""
    config, _ = write_config(tmp_path, final_test=False)
    env = {k: v for k, v in os.environ.items() if k != BASE_URL_ENV}
    runs = str(tmp_path / "runs")

    def architect(*args):
        proc = subprocess.run([sys.executable, "-c", "from harness.cli import main; main()", "shaper", *args,
                               "--runs-dir", runs, "--json"], capture_output=True, text=True, env=env, timeout=300)
        return proc.returncode, json.loads(proc.stdout.splitlines()[-1])

    code, refused = architect("init", "babyai-llm", "--config", str(config), "--run-id", "online")
    assert code != 0 and "a model endpoint failed" in refused["error"] and "--scripted-models" in refused["error"]
    code, made = architect("init", "babyai-llm", "--config", str(config), "--run-id", "offline", "--scripted-models")
    assert code == 0, made
    code, status = architect("status", "offline")
    assert status["scripted_models"] is True and status["next"] == "gradient" and status["branching"] == 2
    code, batch = architect("minibatch", "offline", "--candidate", status["beam"][0]["candidate"])
    assert code == 0 and len(batch["minibatch"]) == 2 and all(batch["steps_to_judge"].values()), batch

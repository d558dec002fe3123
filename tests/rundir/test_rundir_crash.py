"""Crash safety and locking: kill -9 at random moments never leaves a half
iteration committed, and the run always resumes; failures injected at each
step of commit/discard are finished or rolled back; a second process on the
same run is told the run is busy."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from rundir_kit import ARCHITECT, SMALL, cli, git, iteration_commits
from harness.rundir import commit as commit_mod
from harness.rundir import gitops, journal
from harness.rundir.check import run_check
from harness.rundir.commit import commit, discard
from harness.rundir.run import open_run
from harness.rundir.stage import stage

REQUIRED = ["candidate/graph.json", "proposal.md", "patch.json", "diff.txt", "smoke/metrics.json", "eval/metrics.json"]


def assert_consistent(run_dir: Path) -> dict:
    status = cli("status", str(run_dir))
    assert status["busy"] is None
    assert status["consistent"], status["problems"]
    committed = iteration_commits(run_dir)
    assert committed == list(range(len(committed)))
    assert status["committed"] == committed
    assert status["state"]["next_iteration"] == len(committed)
    tracked = set(git(run_dir, "ls-tree", "-r", "--name-only", "HEAD").split())
    for n in committed[1:]:  # every committed iteration is whole
        for name in REQUIRED:
            assert f"iterations/{n}/{name}" in tracked, f"iteration {n} committed without {name}"
    assert git(run_dir, "status", "--porcelain", "--", "iterations").strip() == ""
    assert not (run_dir / ".journal.json").exists()
    return status


def loop_cmd(run_dir: Path, iterations: int) -> list[str]:
    return [*ARCHITECT, "loop", "random", "babyai", "--run-id", run_dir.name, "--runs-dir", str(run_dir.parent),
            "--resume", "--iterations", str(iterations)]


# The run's cap, far above what 15 rounds of at most 2 s commit on any machine (the shared
# run's cap of 40 was reached on a fast one): the kill phase leaves something to resume.
KILL_PHASE_CAP = 1000


def test_repeated_sigkill_leaves_a_consistent_resumable_run(tmp_path: Path):
    run_dir = Path(cli("init", "random", "babyai", "--run-id", "r", "--runs-dir", str(tmp_path / "runs"),
                       "--max-iterations", str(KILL_PHASE_CAP), "--seed", "7", *SMALL)["run"])
    rng = random.Random(20261129)
    kills = 0
    for round_ in range(15):
        proc = subprocess.Popen(loop_cmd(run_dir, KILL_PHASE_CAP), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        time.sleep(rng.uniform(0.5, 2.0))  # over two iterations or more (about 0.6 s each): any of their steps
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
        if round_ % 2:
            time.sleep(0.3)  # let an orphaned git child finish what the dead loop started
        try:  # then the evaluation workers and any git child die too
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        assert_consistent(run_dir)
    assert kills >= 10
    before = len(iteration_commits(run_dir)) - 1
    assert before < KILL_PHASE_CAP, "the kill phase reached the run's cap: nothing left to resume"
    out = cli("loop", "random", "babyai", "--run-id", run_dir.name, "--runs-dir", str(run_dir.parent),
              "--resume", "--iterations", str(before + 1), "--no-certify")
    assert out["stop_reason"] == "iterations_done"
    status = assert_consistent(run_dir)
    assert status["state"]["next_iteration"] == before + 2
    assert status["staged"] == []


def _ready_staging(run, edit_value: str = "left") -> Path:
    staging = stage(run)
    path = staging / "candidate" / "graph.json"
    graph = json.loads(path.read_text())
    graph["nodes"]["explore"]["config"]["hand"] = edit_value
    path.write_text(json.dumps(graph))
    assert run_check(run, staging)["ok"]
    assert run.evaluate_staging(staging, "smoke")["passed"]
    assert run.evaluate_staging(staging, "eval")["passed"]
    return staging


class Crash(BaseException):
    """Stands for the process dying at this point (not caught by anything)."""


def test_crash_before_the_git_commit_rolls_back_to_staging(run_dir: Path, monkeypatch):
    with open_run(run_dir) as run:
        staging = _ready_staging(run)
        ledger_before = run.paths.ledger.read_text()
        monkeypatch.setattr(gitops, "commit_iteration", lambda *a, **k: (_ for _ in ()).throw(Crash()))
        with pytest.raises(Crash):
            commit(run, staging, "left hand")
        assert (run_dir / "iterations/1").exists() and (run_dir / ".journal.json").exists()
    monkeypatch.undo()
    status = assert_consistent(run_dir)  # status recovers under the lock
    assert status["recovered"] and "rolled back" in status["recovered"][0]
    assert (run_dir / "ledger.jsonl").read_text() == ledger_before
    assert status["staged"] == ["1"] and iteration_commits(run_dir) == [0]
    with open_run(run_dir) as run:  # the rolled-back attempt still commits: its results are intact
        row = commit(run, run.staging("1"), "left hand")
    assert row["iteration"] == 1 and iteration_commits(run_dir) == [0, 1]
    assert_consistent(run_dir)


def test_crash_after_the_git_commit_finishes_the_bookkeeping(run_dir: Path, monkeypatch):
    with open_run(run_dir) as run:
        staging = _ready_staging(run)
        monkeypatch.setattr(journal, "end", lambda paths: (_ for _ in ()).throw(Crash()))
        with pytest.raises(Crash):
            commit(run, staging, "left hand")
    monkeypatch.undo()
    status = assert_consistent(run_dir)
    assert "finished" in status["recovered"][0]
    assert iteration_commits(run_dir) == [0, 1] and status["state"]["next_iteration"] == 2


def test_crash_in_the_middle_of_a_git_commit_is_rolled_back(run_dir: Path, monkeypatch):
    """`git add` ran, then the process died: index staged, stale index.lock left behind."""
    def add_then_die(root, iteration, subject, paths):
        gitops.git(root, "add", "-A", "--", *paths)
        (root / ".git" / "index.lock").write_text("")
        raise Crash()

    with open_run(run_dir) as run:
        staging = _ready_staging(run)
        monkeypatch.setattr(gitops, "commit_iteration", add_then_die)
        monkeypatch.setattr(gitops, "SETTLE_SECONDS", 0.2)
        with pytest.raises(Crash):
            commit(run, staging, "left hand")
    monkeypatch.undo()
    monkeypatch.setattr(gitops, "SETTLE_SECONDS", 0.2)
    assert_consistent(run_dir)
    assert iteration_commits(run_dir) == [0]
    assert git(run_dir, "diff", "--cached", "--name-only").strip() == ""


def test_crash_during_discard_is_completed_once(run_dir: Path, monkeypatch):
    with open_run(run_dir) as run:
        staging = stage(run)
        monkeypatch.setattr(commit_mod.shutil, "rmtree", lambda *a, **k: (_ for _ in ()).throw(Crash()))
        with pytest.raises(Crash):
            discard(run, staging, "not promising")
    monkeypatch.undo()
    status = assert_consistent(run_dir)
    rows = [json.loads(line) for line in (run_dir / "ledger.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["committed", "discarded"]
    assert status["staged"] == [] and status["state"]["consecutive_skips"] == 1


def test_a_second_process_is_told_the_run_is_busy_and_stop_ends_the_first_cleanly(run_dir: Path):
    proc = subprocess.Popen(loop_cmd(run_dir, 50), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        pid_file = run_dir / ".lock.pid"
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text().strip() == str(proc.pid)):
            assert time.monotonic() < deadline and proc.poll() is None, "the loop never took the lock"
            time.sleep(0.05)
        second = subprocess.run(loop_cmd(run_dir, 1) + ["--json"], capture_output=True, text=True)
        assert second.returncode == 3
        assert json.loads(second.stdout)["error"].startswith(f"run is busy (held by pid {proc.pid})")
        busy_stage = cli("stage", str(run_dir), ok=False)
        assert busy_stage["_exit_code"] == 3 and "run is busy" in busy_stage["error"]
        view = cli("status", str(run_dir))  # a read-only view still works
        assert view["busy"] and "run is busy" in view["busy"]
        (run_dir / "STOP").write_text("")
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    status = assert_consistent(run_dir)
    assert status["state"]["stop_reason"] == "stop_file" and status["state"]["status"] == "stopped"
    assert not (run_dir / "STOP").exists()  # honoured once: --resume continues
    assert len(iteration_commits(run_dir)) < 50


def test_damaged_ledger_and_state_are_repaired_from_git_history(run_dir: Path):
    committed_ledger = (run_dir / "ledger.jsonl").read_text()
    (run_dir / "ledger.jsonl").write_text(committed_ledger + '{"attempt": 1, "trunc')
    (run_dir / "state.json").write_text("{}")
    status = assert_consistent(run_dir)
    assert any("restored from the last commit" in a for a in status["recovered"])
    assert (run_dir / "ledger.jsonl").read_text() == committed_ledger
    assert status["state"]["next_iteration"] == 1 and status["state"]["best"]["iteration"] == 0


def test_an_init_killed_midway_leaves_no_run_and_is_cleaned_up(tmp_path: Path):
    runs = tmp_path / "runs"
    proc = subprocess.Popen([*ARCHITECT, "init", "random", "babyai", "--run-id", "x", "--runs-dir", str(runs)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 30
    while not list(runs.glob(".init-x-*/iterations")):  # killed while iteration 0 is being evaluated
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (runs / "x").exists()
    out = cli("init", "random", "babyai", "--run-id", "x", "--runs-dir", str(runs), "--smoke-episodes", "2",
              "--eval-episodes", "3")
    assert iteration_commits(Path(out["run"])) == [0]
    assert [p.name for p in runs.iterdir()] == ["x"]

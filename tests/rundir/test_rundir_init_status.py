"""An init in progress is visible: `status` reports it (folder, pid, what it does),
any other command says so instead of "no run", and a second init of the same run
id refuses at once naming the running one; init shows episode progress; status
names the file rules a runs folder outside the project needs."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from rundir_kit import ARCHITECT, SMALL, cli

from harness import PROJECT_ROOT
from harness.rundir.permissions import rules_for

HOLDER = """
import sys, time
from pathlib import Path
from harness.rundir.init_progress import InitInProgress
runs = Path(sys.argv[1])
with InitInProgress(runs, "busy", runs / ".init-busy-fake") as p:
    logs = runs / ".init-busy-fake" / "iterations" / "0" / "eval" / "episodes"
    logs.mkdir(parents=True)
    for name in ("a", "b"):
        (logs / f"{name}.jsonl").write_text("")
    p.say("iteration 0: performance tier (search)")
    print("held", flush=True)
    time.sleep(60)
"""


def _hold(runs: Path) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(runs)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_running_init_is_reported_and_a_second_init_refuses_at_once(tmp_path: Path):
    runs = tmp_path / "runs"
    runs.mkdir()
    holder = _hold(runs)
    try:
        status = cli("status", "busy", "--runs-dir", str(runs))
        assert status["initializing"]["pid"] == holder.pid
        assert status["initializing"]["doing"] == "iteration 0: performance tier (search)"
        assert status["initializing"]["episodes_logged"] == {"smoke": 0, "eval": 2}
        assert "episodes logged so far: smoke 0, performance tier 2" in status["summary"]
        assert str(holder.pid) in status["busy"] and ".init-busy-fake" in status["busy"]

        log = cli("log", "busy", "--runs-dir", str(runs), ok=False)
        assert log["_exit_code"] != 0 and "being created by `architect init`" in log["error"]

        started = time.monotonic()
        second = cli("init", "random", "babyai", "--run-id", "busy", "--runs-dir", str(runs), *SMALL, ok=False)
        assert time.monotonic() - started < 20  # refused before any evaluation, not after a whole duplicate one
        assert second["_exit_code"] != 0 and f"pid {holder.pid}" in second["error"] and second["kind"] == "RunBusy"
        assert not (runs / "busy").exists()
    finally:
        holder.kill()
        holder.wait()
    gone = cli("status", "busy", "--runs-dir", str(runs), ok=False)
    assert gone["_exit_code"] != 0 and gone["error"].startswith("no run at") and gone["kind"] == "RunMissing"


def test_init_leaves_no_progress_files_behind(tmp_path: Path):
    runs = tmp_path / "runs"
    cli("init", "random", "babyai", "--run-id", "r1", "--runs-dir", str(runs), *SMALL)
    assert sorted(p.name for p in runs.iterdir()) == ["r1"]
    missing = cli("status", "r2", "--runs-dir", str(runs), ok=False)["error"]  # names the runs there
    assert missing.startswith("no run at 'r2'") and missing.endswith(f"runs in {runs}/: r1")
    assert cli("status", "r1", "--runs-dir", str(runs))["consistent"] is True


def test_init_reports_episode_progress_on_stderr_when_it_is_not_a_terminal(tmp_path: Path):
    done = subprocess.run([*ARCHITECT, "init", "random", "babyai", "--run-id", "p", "--runs-dir", str(tmp_path),
                           *SMALL, "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.strip().splitlines()) == 1
    assert "· smoke: 2/2 episodes" in done.stderr and "· search: 3/3 episodes, success" in done.stderr


def test_status_names_the_permission_rules_a_runs_folder_outside_the_project_needs(base_run: Path):
    status = cli("status", str(base_run))
    rules = status["permissions"]
    runs = base_run.parent.resolve().as_posix()
    assert rules["file"] == ".claude/settings.local.json"
    assert f"Read(/{runs}/**)" in rules["allow"] and f"Read(/{runs}/*/certification.json)" in rules["deny"]
    assert "permissions: the project's file rules cover ./runs only" in status["summary"]
    assert rules_for(PROJECT_ROOT / "runs") is None  # the project's own rules cover it

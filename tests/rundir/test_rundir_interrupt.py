"""Ctrl-C and SIGTERM stop a running loop within seconds: every process it
started is gone, stderr holds one line saying what was stopped and how to
continue (no traceback), the exit code is 128 + the signal, and the run is
consistent. SIGINT is delivered to a loop started with SIGINT ignored, as a
non-interactive shell starts a background job. A run's warm forkserver
(harness.evaluation.warm) outlives the command by design, and stops itself
once idle; a command whose workers fork from it, stopped mid-tier, leaves none
of them running."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from rundir_kit import ARCHITECT, cli, git
from test_rundir_crash import assert_consistent


def _alive(p: psutil.Process) -> bool:
    """Running and not a zombie (a process that ends between the two questions is not alive)."""
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _cmdline(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


@pytest.mark.parametrize("signum,warm", [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGINT, True)],
                         ids=["SIGINT", "SIGTERM", "SIGINT-warm-forkserver"])
def test_signal_stops_the_loop_cleanly(run_dir, tmp_path, signum, warm, subprocess_env, runtime_dir):
    env = dict(subprocess_env, ARCHITECT_CACHE_DIR=str(tmp_path / "cache"), ARCHITECT_WARM_FORKSERVER=str(int(warm)),
               ARCHITECT_WARM_FORKSERVER_IDLE_SECONDS="1", XDG_RUNTIME_DIR=str(runtime_dir))
    proc = subprocess.Popen(
        [*ARCHITECT, "loop", "random", "babyai", "--run-id", run_dir.name, "--runs-dir", str(run_dir.parent),
         "--resume", "--iterations", "40", "--no-certify"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    me = psutil.Process(proc.pid)
    deadline = time.monotonic() + 60
    while len(me.children(recursive=True)) < 2:  # the forkserver and a worker at least
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    time.sleep(1.0)  # well inside the loop's iterations
    started = {p: _cmdline(p) for p in me.children(recursive=True)}
    sent = time.monotonic()
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 15, err
    assert proc.returncode == 128 + signum, err
    # a warm server, its watchdog and the workers forked from it share its command line; `architect loop`
    # keeps its own forkserver even where warm servers are on (warm=True), so it starts none
    servers = [p for p, line in started.items() if "harness.evaluation.warm import serve" in line]
    assert not servers
    left = [p for p in started if p not in servers and _alive(p)]
    assert left == [], f"processes left behind: {left}"
    psutil.wait_procs(servers, timeout=20)  # the workers were killed; idle, the warm server stops itself
    assert not [p for p in servers if _alive(p)]
    assert "Traceback" not in err and "Error" not in err, err
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"interrupted ({signal.Signals(signum).name}): stopped")
    assert "--resume" in line and "interrupted" in line
    status = assert_consistent(run_dir)
    assert status["state"]["stop_reason"] == "interrupted"
    resumed = cli("loop", "random", "babyai", "--run-id", run_dir.name, "--runs-dir", str(run_dir.parent),
                  "--resume", "--iterations", str(status["state"]["next_iteration"]), "--no-certify")
    assert resumed["stop_reason"] != "interrupted"



def test_a_loop_interrupted_inside_its_git_commit_commits_no_half_iteration(run_dir, monkeypatch):
    """Ctrl-C while `git commit` runs for iteration 1: iterations/1 is in place, its commit not made.
    The stopping loop's own commit (state, ledger) must not take that folder in with it: the
    attempt goes back to staging and HEAD holds iteration 0 only."""
    from harness.rundir import gitops
    from harness.rundir.layout import resolve_run
    from harness.rundir.loop import Progress, run_loop
    from harness.variant_api import find_variant

    def add_then_interrupt(root, iteration, subject, paths):
        gitops.git(root, "add", "-A", "--", *paths)
        raise KeyboardInterrupt

    monkeypatch.setattr(gitops, "commit_iteration", add_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        run_loop(resolve_run(str(run_dir)), target=40, seed=None, show=Progress(enabled=False),
                 propose=find_variant("random").proposer())
    monkeypatch.undo()
    assert git(run_dir, "ls-tree", "-d", "--name-only", "HEAD", "iterations/").split() == ["iterations/0"]
    status = assert_consistent(run_dir)
    assert status["recovered"] == [] and status["staged"] == ["1"]
    assert status["state"]["stop_reason"] == "interrupted"
    assert git(run_dir, "log", "-1", "--format=%s").strip() == "loop stopped: interrupted"


@pytest.fixture(scope="module")
def baseline_run(tmp_path_factory) -> Path:
    """A run whose baseline scored 24 search episodes, evaluated in a cache of its own (a test's
    staged copy of it must run its episodes again) and without a warm server."""
    runs = tmp_path_factory.mktemp("warm-runs")
    env = dict(os.environ, ARCHITECT_CACHE_DIR=str(runs / "baseline-cache"), ARCHITECT_WARM_FORKSERVER="0")
    subprocess.run([*ARCHITECT, "init", "random", "babyai", "--run-id", "w", "--runs-dir", str(runs),
                    "--eval-episodes", "24", "--smoke-episodes", "1", "--json"], env=env, check=True,
                   capture_output=True, timeout=120)
    return runs / "w"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_a_command_stopped_mid_tier_leaves_the_runs_warm_server_no_worker(baseline_run, tmp_path, subprocess_env,
                                                                          signum, runtime_dir):
    """`architect evaluate` forks its workers from the run's warm server, which outlives the command.
    Stopped mid-tier (Ctrl-C, or killed outright), it leaves no worker running; the same server
    serves the run's next command, which reuses the episodes the stopped one cached and scores the
    staged copy of the baseline episode for episode as the baseline scored."""
    run, xdg = tmp_path / "runs" / "w", runtime_dir
    shutil.copytree(baseline_run, run)
    env = dict(subprocess_env, XDG_RUNTIME_DIR=str(xdg), ARCHITECT_CACHE_DIR=str(tmp_path / "cache"),
               ARCHITECT_WARM_FORKSERVER="1", ARCHITECT_WARM_FORKSERVER_IDLE_SECONDS="10")

    def architect(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*ARCHITECT, *args, "--json"], capture_output=True, text=True, env=env, timeout=120)

    staging = Path(json.loads(architect("stage", str(run)).stdout)["staging"])
    proc = subprocess.Popen([*ARCHITECT, "evaluate", str(run), staging.name, "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    episodes = staging / "eval" / "episodes"
    deadline = time.monotonic() + 60
    while len(list(episodes.glob("*.jsonl"))) < 3:  # mid-tier: some episodes done, most to come
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    (record,) = [json.loads(p.read_text()) for p in xdg.glob("architect-*/*.json")]
    server = psutil.Process(record["pid"])
    workers = [p for p in server.children(recursive=True) if p.ppid() != server.pid]  # (its child is the forkserver)
    assert workers
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == (128 + signum if signum == signal.SIGINT else -signum), err
    _, alive = psutil.wait_procs(workers, timeout=15)
    assert not [p for p in alive if _alive(p)], "workers outlived their command"
    assert len(list(episodes.glob("*.jsonl"))) < 24
    if signum == signal.SIGINT:
        assert err.strip().splitlines()[-1].startswith("interrupted (SIGINT): stopped"), err

    again = architect("evaluate", str(run), staging.name)
    assert again.returncode == 0, again.stderr
    verdict = json.loads(again.stdout)
    assert verdict["passed"] and 0 < verdict["cached_episodes"] < 24
    servers = [json.loads(p.read_text())["pid"] for p in xdg.glob("architect-*/*.json")]
    assert servers == [server.pid] and server.is_running()  # the same server, still warm

    def outcomes(folder: Path) -> list:
        m = json.loads((folder / "metrics.json").read_text())
        assert all((folder / r["log"]).is_file() for r in m["episodes"])
        return [(r["episode_id"], r["success"], r["steps"]) for r in m["episodes"]]

    assert outcomes(staging / "eval") == outcomes(run / "iterations" / "0" / "eval")
    assert git(run, "status", "--porcelain") == ""

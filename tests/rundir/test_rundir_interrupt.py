"""Ctrl-C and SIGTERM stop a running loop within seconds: every process it
started is gone, stderr holds one line saying what was stopped and how to
continue (no traceback), the exit code is 128 + the signal, and the run is
consistent. SIGINT is delivered to a loop started with SIGINT ignored, as a
non-interactive shell starts a background job. A run's warm forkserver
(harness.evaluation.warm) outlives the command by design, and stops itself
once idle."""

from __future__ import annotations

import signal
import subprocess
import time

import psutil
import pytest

from rundir_kit import ARCHITECT, cli
from test_rundir_crash import assert_consistent


def _cmdline(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


@pytest.mark.parametrize("signum,warm", [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGINT, True)],
                         ids=["SIGINT", "SIGTERM", "SIGINT-warm-forkserver"])
def test_signal_stops_the_loop_cleanly(run_dir, tmp_path, signum, warm, subprocess_env):
    env = dict(subprocess_env, ARCHITECT_CACHE_DIR=str(tmp_path / "cache"), ARCHITECT_WARM_FORKSERVER=str(int(warm)),
               ARCHITECT_WARM_FORKSERVER_IDLE_SECONDS="1", XDG_RUNTIME_DIR=str(tmp_path / "xdg"))
    (tmp_path / "xdg").mkdir(mode=0o700)
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
    assert time.monotonic() - sent < 15
    assert proc.returncode == 128 + signum, err
    # a warm server, its watchdog and the workers forked from it share its command line; `architect loop`
    # keeps its own forkserver even where warm servers are on (warm=True), so it starts none
    servers = [p for p, line in started.items() if "harness.evaluation.warm import serve" in line]
    assert not servers
    left = [p for p in started if p not in servers and p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert left == [], f"processes left behind: {left}"
    psutil.wait_procs(servers, timeout=20)  # the workers were killed; idle, the warm server stops itself
    assert not [p for p in servers if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert "Traceback" not in err and "Error" not in err, err
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"interrupted ({signal.Signals(signum).name}): stopped")
    assert "--resume" in line and "interrupted" in line
    status = assert_consistent(run_dir)
    assert status["state"]["stop_reason"] == "interrupted"
    resumed = cli("loop", "random", "babyai", "--run-id", run_dir.name, "--runs-dir", str(run_dir.parent),
                  "--resume", "--iterations", str(status["state"]["next_iteration"]), "--no-certify")
    assert resumed["stop_reason"] != "interrupted"

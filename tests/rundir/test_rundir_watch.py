"""`architect status --watch` follows a run while a loop holds it, and ends
with the final status once the loop stops."""

from __future__ import annotations

import json
import subprocess
import time

from rundir_kit import ARCHITECT

from harness.rundir import state
from harness.rundir.layout import RunPaths
from harness.rundir.lock import run_lock


def test_watch_follows_a_running_loop_until_it_stops(run_dir, subprocess_env):
    paths = RunPaths(run_dir)
    with run_lock(paths.lock):  # this test plays the loop: it holds the run and marks it running
        state.refresh(paths, status="running", stop_reason=None)
        watcher = subprocess.Popen([*ARCHITECT, "status", str(run_dir), "--watch", "--interval", "0.2", "--json"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env)
        time.sleep(3)
        assert watcher.poll() is None, "the watch ended while the loop was still running"
        state.refresh(paths, status="stopped", stop_reason="iterations_done")
    out, err = watcher.communicate(timeout=60)
    assert watcher.returncode == 0, err
    final = json.loads(out)
    assert final["state"]["status"] == "stopped" and final["state"]["stop_reason"] == "iterations_done"
    assert "latest attempts" in err  # the live view (on a non-terminal: its last frame)

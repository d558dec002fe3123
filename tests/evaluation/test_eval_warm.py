"""The warm forkserver of a run (harness.evaluation.warm): consecutive commands fork their
workers from one server; a changed setup gets a server of its own; a server stops when
no process has used it for its idle time, and a dead or foreign one is replaced; the
user's folder must be private."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from harness.evaluation import warm
from harness.evaluation.pool import PoolConfig, run_pool

HERE = Path(__file__).resolve().parent
COMMAND = """
import json, sys
sys.path.insert(0, {here!r})
from harness.evaluation.pool import PoolConfig, run_pool
if __name__ == "__main__":
    cfg = PoolConfig(workers=1, threads=1, in_flight=1, task_timeout=30, preload=("eval_fake_runners",),
                     warm_scope={scope!r})
    out = run_pool([{{"index": 0, "episode": {{"episode_id": "e", "seed": 0, "say": "a worker speaks"}},
                     "log_path": None}}],
                   "eval_fake_runners:ScriptedRunner", {{}}, cfg)
    print(json.dumps(out[0].record["metrics"]))
"""


@pytest.fixture
def private(tmp_path, monkeypatch, runtime_dir):
    """A private runtime folder and a run folder; every server started is stopped after."""
    runtime = runtime_dir
    scope = tmp_path / "run"
    scope.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("ARCHITECT_WARM_FORKSERVER", "1")
    monkeypatch.setenv("ARCHITECT_WARM_FORKSERVER_IDLE_SECONDS", "60")
    # An `architect loop` run in this process by an earlier test marks it as keeping its forkserver
    # private (set here, not by monkeypatch: a test below undoes its monkeypatches midway).
    kept, warm._private = warm._private, False
    folder = runtime / f"architect-{os.getuid()}"
    yield folder, scope
    warm._private = kept
    for record in folder.glob("*.json"):
        pid = json.loads(record.read_text())["pid"]
        _stop(pid)


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    _wait_until(lambda: not _alive(pid))


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _wait_until(condition, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _command(scope: Path) -> dict:
    """One `architect` command of the run: its own process, one episode on one worker."""
    out = subprocess.run([sys.executable, "-c", COMMAND.format(here=str(HERE), scope=str(scope))],
                         capture_output=True, text=True, check=True, env=dict(os.environ))
    return {**json.loads(out.stdout.splitlines()[-1]), "stderr": out.stderr}


def _records(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in folder.glob("*.json")]


def _in_process(scope: Path) -> dict:
    cfg = PoolConfig(workers=1, threads=1, in_flight=1, task_timeout=30, preload=("eval_fake_runners",),
                     warm_scope=str(scope))
    out = run_pool([{"index": 0, "episode": {"episode_id": "e", "seed": 0}, "log_path": None}],
                   "eval_fake_runners:ScriptedRunner", {}, cfg)
    return out[0].record["metrics"]


def test_consecutive_commands_of_a_run_fork_from_one_warm_server(private):
    folder, scope = private
    first, second = _command(scope), _command(scope)
    (server,) = _records(folder)
    assert first["pid"] != second["pid"]
    assert first["ppid"] == second["ppid"]  # the same forkserver forked both commands' workers
    assert "a worker speaks" in first["stderr"] and "a worker speaks" in second["stderr"]
    assert _ppid(first["ppid"]) == server["pid"] and _alive(server["pid"])  # it outlived both commands
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert oct(next(folder.glob("*.sock")).stat().st_mode & 0o777) == "0o600"


def test_a_changed_checkout_or_environment_gets_a_server_of_its_own(private, monkeypatch):
    folder, scope = private
    before = _in_process(scope)
    monkeypatch.setattr(warm, "code_hash", lambda: "the sources changed")
    changed = _in_process(scope)
    monkeypatch.undo()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder.parent))
    monkeypatch.setenv("ARCHITECT_WARM_FORKSERVER", "1")
    monkeypatch.setenv("ARCHITECT_TEST_PROBE", "another environment")
    other_env = _in_process(scope)
    assert len({before["ppid"], changed["ppid"], other_env["ppid"]}) == 3
    assert len(_records(folder)) == 3
    assert other_env["probe_env"] == "another environment"


def test_an_idle_server_stops_and_removes_its_files(private, monkeypatch):
    folder, scope = private
    monkeypatch.setenv("ARCHITECT_WARM_FORKSERVER_IDLE_SECONDS", "0.5")
    _command(scope)  # its process exits: nothing holds the lease any more
    (server,) = _records(folder)
    _wait_until(lambda: not _alive(server["pid"]))
    assert not list(folder.glob("*.json")) and not list(folder.glob("*.sock"))


def test_a_server_in_use_is_not_stopped_by_its_idle_time(private, monkeypatch):
    folder, scope = private
    monkeypatch.setenv("ARCHITECT_WARM_FORKSERVER_IDLE_SECONDS", "0.3")
    first = _in_process(scope)  # this process now holds the lease
    time.sleep(1.2)
    assert _in_process(scope)["ppid"] == first["ppid"]


def test_a_dead_or_foreign_server_is_replaced(private):
    folder, scope = private
    first = _in_process(scope)
    (server,) = _records(folder)
    os.kill(server["pid"], signal.SIGKILL)  # no clean-up: its record and socket stay behind
    _wait_until(lambda: not _alive(first["ppid"]))
    assert list(folder.glob("*.json"))
    second = _in_process(scope)
    (replacement,) = _records(folder)
    assert replacement["pid"] != server["pid"] and _ppid(second["ppid"]) == replacement["pid"]
    record = next(folder.glob("*.json"))
    record.write_text(json.dumps({**replacement, "pid": os.getpid()}))  # a live pid that is no server
    files = warm.ServerFiles(folder, str(scope), replacement["key"])
    assert warm.running_server(files) is None
    record.write_text(json.dumps(replacement))
    assert warm.running_server(files) == replacement["pid"]


def test_a_folder_others_may_enter_is_not_used(private):
    folder, scope = private
    folder.mkdir(mode=0o700)
    folder.chmod(0o777)
    assert warm.warm_context(str(scope), ()) is None
    assert _in_process(scope)["pid"]  # the evaluation still runs, on a private forkserver
    assert not _records(folder)


def test_off_switch_and_a_missing_scope(private, monkeypatch):
    folder, scope = private
    assert warm.warm_context(str(scope / "gone"), ()) is None
    monkeypatch.setenv("ARCHITECT_WARM_FORKSERVER", "0")
    assert warm.warm_context(str(scope), ()) is None
    assert not _records(folder)


def test_an_evaluation_of_a_run_forks_from_the_runs_warm_server(private, eval_env, tmp_path):
    from eval_candidates import make_candidate

    from harness.evaluation import evaluate

    folder, scope = private
    m = evaluate(make_candidate(tmp_path / "cand", max_steps=2), "smoke", episodes=2, workers=1, use_cache=False,
                 progress=False, warm_scope=str(scope))
    assert m["complete"] and all(r["error"] is None for r in m["episodes"])
    (server,) = _records(folder)
    assert _alive(server["pid"])


def test_a_loop_keeps_its_own_forkserver_and_leaves_no_server_behind(private, tmp_path):
    folder, _ = private
    env = dict(os.environ, ARCHITECT_RUNS_DIR=str(tmp_path / "runs"), ARCHITECT_CACHE_DIR=str(tmp_path / "cache"))
    subprocess.run(["architect", "loop", "random", "babyai", "--iterations", "1", "--smoke-episodes", "1",
                    "--eval-episodes", "2", "--no-certify", "--json"], env=env, capture_output=True, check=True)
    assert not _records(folder)  # a warm server would have outlived the command
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _serves_warm(p, tmp_path)]
    assert not left


def _serves_warm(proc: Path, under: Path) -> bool:
    try:
        cmdline = (proc / "cmdline").read_bytes()
    except OSError:
        return False
    return b"harness.evaluation.warm import serve" in cmdline and str(under).encode() in cmdline


def test_a_runtime_folder_too_deep_for_a_socket_path_gives_way_to_the_temp_folder(monkeypatch, tmp_path, runtime_dir):
    deep = tmp_path / ("d" * 100)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))
    monkeypatch.setattr(tempfile, "tempdir", str(runtime_dir))
    folder = warm.private_folder()
    assert folder == runtime_dir / f"architect-{os.getuid()}" and not deep.exists()
    assert len(os.fsencode(warm.ServerFiles(folder, str(tmp_path), "k").socket)) <= warm.SOCKET_PATH_MAX
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    assert warm.private_folder() is None  # no folder leaves room: no warm server (commands fork their own)

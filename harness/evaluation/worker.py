"""The worker process: a few runner threads fed from the supervisor's pipe.

A worker builds its runners once (so simulators stay alive across episodes),
says "ready", then each thread takes the next task from a local queue, runs it
and sends back the record. All messages to the supervisor go through one pipe
guarded by a lock (a Connection is not thread-safe); a message is written in one
synchronous call, so a worker that dies leaves no half-written message behind
in a pipe anyone else reads.
"""

from __future__ import annotations

import importlib
import os
import queue
import signal
import sys
import threading
import time
import traceback
from typing import Any, Callable


def resolve(ref: str) -> Callable[..., Any]:
    """Import `package.module:attribute`."""
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def worker_main(worker_id: int, factory_ref: str, factory_args: dict, threads: int, task_conn, result_conn,
                environ: dict | None = None) -> None:
    """`environ`: the parent's environment when it started this worker (a
    worker forked from a forkserver would otherwise have the forkserver's)."""
    if environ is not None:
        os.environ.clear()
        os.environ.update(environ)
    _stdout_to_stderr()
    # Ctrl-C reaches the terminal's whole process group: the supervisor stops the workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    send_lock = threading.Lock()

    def send(msg: tuple) -> None:
        with send_lock:
            try:
                result_conn.send(msg)
            except (BrokenPipeError, ConnectionResetError):  # the supervisor is gone: nobody wants the result
                os._exit(0)

    runners: list[Any] = []
    setup_error: str | None = None
    try:
        factory = resolve(factory_ref)
        for _ in range(threads):
            runners.append(factory(**factory_args))
    except BaseException:  # noqa: BLE001 - agent setup code may raise anything
        setup_error = traceback.format_exc()

    local: queue.Queue = queue.Queue()

    def serve(runner: Any) -> None:
        while True:
            task = local.get()
            if task is None:
                return
            index = task["index"]
            send(("start", worker_id, index, time.time()))
            if setup_error is not None:
                send(("done", worker_id, index, setup_failure_record(setup_error)))
                continue
            try:
                record = runner.run(task["episode"], task.get("log_path"))
            except BaseException:  # noqa: BLE001 - harness-side failure: infra, retried
                send(("failed", worker_id, index, traceback.format_exc()))
                continue
            send(("done", worker_id, index, record))

    pool = [threading.Thread(target=serve, args=(runners[i] if runners else None,), daemon=True)
            for i in range(threads if setup_error is None else 1)]
    for t in pool:
        t.start()
    send(("ready", worker_id, os.getpid(), setup_error is None))
    try:
        while True:
            try:
                task = task_conn.recv()
            except EOFError:
                task = None
            if task is None:
                break
            local.put(task)
    finally:
        for _ in pool:
            local.put(None)
        for t in pool:
            t.join()
        for runner in runners:
            try:
                runner.close()
            except Exception:  # noqa: BLE001 - closing is best effort at shutdown
                pass


def _stdout_to_stderr() -> None:
    """Whatever agent code or a simulator prints goes to stderr: the parent's
    stdout carries exactly one JSON object under --json."""
    try:
        sys.stdout.flush()
        os.dup2(sys.stderr.fileno(), 1)
    except (OSError, ValueError, AttributeError):
        pass
    sys.stdout = sys.stderr


def setup_failure_record(error: str) -> dict:
    """The candidate could not even be built (a node's setup raised): every
    episode fails as an agent error, deterministically."""
    return {
        "success": False, "reward": 0.0, "steps": 0, "ticks": 0,
        "termination": "node_error",
        "error": "runner setup failed:\n" + error,
        "metrics": {}, "model_calls": 0, "input_tokens": 0, "output_tokens": 0,
        "cost_usd": 0.0, "wall_seconds": 0.0,
    }

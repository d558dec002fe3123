"""The supervisor: worker processes fed from one dynamic queue, with kill/replace.

`run_pool` keeps up to `workers` processes (multiprocessing, forked from a
forkserver that has the worker's modules loaded: `worker_context`), each with
`threads` runner threads, and hands the next pending task to whichever worker
has a free thread, so no worker waits for the slowest one. It knows at
every moment which task runs in which worker, so when a worker dies (its
sentinel fires) or a task overruns `task_timeout`, the worker is killed and
replaced and the affected task is retried; after `max_attempts` it is recorded
as an infrastructure failure. Tasks that only shared a killed worker with a
hanging one are requeued without being charged an attempt.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing as mp
import os
import sys
import time
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Callable

from harness.evaluation.forkserver_env import forkserver_sys_path, single_threaded_native_libs
from harness.evaluation.worker import worker_main


@contextlib.contextmanager
def _main_script_hidden_unless_importable():
    """A started worker first re-runs the parent's main script (multiprocessing's
    preparation, so that pickled references to it resolve). A main read from
    stdin (`python - < driver.py`) or deleted since has no file to re-run, and
    every worker would die at start with FileNotFoundError; workers need nothing
    from it (they run harness code), so such a main is hidden while they start."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or getattr(main, "__spec__", None) is not None or os.path.isfile(path):
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


# What every worker imports before its first episode, whatever the executor.
WORKER_MODULES = ("harness.evaluation.worker", "harness.evaluation.runners", "harness.canvas.runtime",
                  "harness.canvas.registry", "harness.canvas.episode_log", "fastjsonschema")


def worker_context(preload: tuple[str, ...] = (), warm_scope: str | None = None):
    """The multiprocessing context workers start from. A spawned worker imports
    the harness and the simulator's runtime anew (most of a second for
    minigrid), which would dominate a short evaluation; so workers fork from a
    forkserver, a single-threaded process that imported WORKER_MODULES and
    `preload` (the executor's `worker_preload` and node modules) once. The
    forkserver starts with this process's first worker and keeps the preload
    list it started with: a later evaluation of another executor imports that
    executor's modules in each worker. Workers take the parent's current
    environment from their start arguments (`worker_main`), not the
    forkserver's. With `warm_scope` (a run's folder) the forkserver is the
    run's warm one, kept across commands (harness.evaluation.warm), when it
    can be had. Where fork is unavailable: spawn."""
    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    if warm_scope is not None:
        from harness.evaluation.warm import warm_context

        ctx = warm_context(warm_scope, tuple(dict.fromkeys(WORKER_MODULES + tuple(preload))))
        if ctx is not None:
            return ctx
    from multiprocessing import forkserver

    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(list(dict.fromkeys(WORKER_MODULES + tuple(preload))))
    with single_threaded_native_libs(), forkserver_sys_path():
        forkserver.ensure_running()
    return ctx


@dataclass
class PoolConfig:
    workers: int
    threads: int
    in_flight: int
    task_timeout: float
    startup_timeout: float = 180.0
    max_attempts: int = 2
    max_startup_failures: int = 3
    preload: tuple[str, ...] = ()  # modules the forkserver imports for the workers (worker_context)
    warm_scope: str | None = None  # a run's folder: fork from its warm forkserver (worker_context)


@dataclass
class _Worker:
    wid: int
    proc: mp.process.BaseProcess
    task_conn: object
    result_conn: object
    started_at: float
    ready: bool = False
    running: dict = field(default_factory=dict)  # task index -> dispatch time (monotonic)


@dataclass
class Outcome:
    index: int
    record: dict | None  # the runner's record, or None for an infrastructure failure
    infra_error: str | None
    attempts: int
    worker: int | None


def run_pool(
    tasks: list[dict],
    factory_ref: str,
    factory_args: dict,
    config: PoolConfig,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> dict[int, Outcome]:
    """Run every task (dicts with "index", "episode", "log_path"); return outcomes by index."""
    return _Supervisor(tasks, factory_ref, factory_args, config, on_outcome).run()


class RetryBookkeeping:
    """Retry semantics shared by the local pool and the Ray pool: an episode charged
    with a failure is retried until `max_attempts`, then recorded as an infrastructure
    failure; giving up records every unfinished episode. Needs `pending`, `attempts`,
    `outcomes`, `cfg`, `on_outcome`, and `_members()`: the live workers or actors,
    each with a `running` dict of episode indices."""

    def _release(self, member, *, reason: str, charge_all: bool) -> None:
        """A lost member's episodes: charged (it failed them) or put back (collateral)."""
        for index in list(member.running):
            member.running.pop(index)
            if charge_all:
                self._charge(index, reason)
            elif index not in self.outcomes:
                self.pending.appendleft(index)

    def _charge(self, index: int, reason: str) -> None:
        if index in self.outcomes:
            return
        self.attempts[index] += 1
        if self.attempts[index] >= self.cfg.max_attempts:
            self._finish(Outcome(index, None, reason, self.attempts[index], None))
        else:
            self.pending.appendleft(index)

    def _give_up(self, reason: str) -> None:
        while self.pending:
            index = self.pending.popleft()
            self._finish(Outcome(index, None, reason, self.attempts[index], None))
        for member in list(self._members()):
            for index in list(member.running):
                self._finish(Outcome(index, None, reason, self.attempts[index], None))
            member.running.clear()

    def _finish(self, outcome: Outcome) -> None:
        if outcome.index in self.outcomes:
            return
        self.outcomes[outcome.index] = outcome
        if self.on_outcome is not None:
            self.on_outcome(outcome)


class _Supervisor(RetryBookkeeping):
    def __init__(self, tasks, factory_ref, factory_args, config: PoolConfig, on_outcome):
        self.tasks = {t["index"]: t for t in tasks}
        self.pending = collections.deque(t["index"] for t in tasks)
        self.factory_ref = factory_ref
        self.factory_args = factory_args
        self.cfg = config
        self.on_outcome = on_outcome
        self.ctx = worker_context(config.preload, config.warm_scope)
        self.workers: dict[int, _Worker] = {}
        self.outcomes: dict[int, Outcome] = {}
        self.attempts = collections.Counter()
        self.next_wid = 0
        self.startup_failures = 0

    # -- lifecycle -------------------------------------------------------
    def run(self) -> dict[int, Outcome]:
        try:
            while len(self.outcomes) < len(self.tasks):
                self._top_up_workers()
                self._dispatch()
                self._wait_and_handle(0.5)
                self._check_deadlines()
        except BaseException:  # interrupted: do not wait for episodes in flight
            for w in self.workers.values():
                self._kill(w)
            raise
        finally:
            self._shutdown()
        return self.outcomes

    def _spawn(self) -> None:
        task_r, task_w = self.ctx.Pipe(duplex=False)
        result_r, result_w = self.ctx.Pipe(duplex=False)
        wid = self.next_wid
        self.next_wid += 1
        with single_threaded_native_libs(), _main_script_hidden_unless_importable():
            proc = self.ctx.Process(
                target=worker_main,
                args=(wid, self.factory_ref, self.factory_args, self.cfg.threads, task_r, result_w,
                      dict(os.environ)),
                name=f"architect-eval-worker-{wid}",
                daemon=False,  # nodes may start processes of their own (sandboxes); we kill workers ourselves
            )
            proc.start()
        # Drop our copies of the child's ends so EOF shows when the child dies.
        task_r.close()
        result_w.close()
        self.workers[wid] = _Worker(wid, proc, task_w, result_r, time.monotonic())

    def _top_up_workers(self) -> None:
        unfinished = len(self.tasks) - len(self.outcomes)
        in_workers = sum(len(w.running) for w in self.workers.values())
        need = len(self.pending) + in_workers
        want = min(self.cfg.workers, max(need, 0), unfinished)
        while len(self.workers) < want:
            self._spawn()

    def _dispatch(self) -> None:
        total = sum(len(w.running) for w in self.workers.values())
        for w in sorted(self.workers.values(), key=lambda w: len(w.running)):
            while (self.pending and w.ready and len(w.running) < self.cfg.threads
                   and total < self.cfg.in_flight):
                index = self.pending.popleft()
                task = self.tasks[index]
                try:
                    w.task_conn.send({"index": index, "episode": task["episode"], "log_path": task.get("log_path")})
                except (BrokenPipeError, OSError):
                    self.pending.appendleft(index)
                    break
                w.running[index] = time.monotonic()
                total += 1

    # -- events ----------------------------------------------------------
    def _wait_and_handle(self, timeout: float) -> None:
        conns = {w.result_conn: w for w in self.workers.values()}
        sentinels = {w.proc.sentinel: w for w in self.workers.values()}
        if not conns:
            return
        ready = wait(list(conns) + list(sentinels), timeout=timeout)
        for obj in ready:
            if obj in conns:
                w = conns[obj]
                if w.wid in self.workers:
                    self._drain(w)
        for obj in ready:
            if obj in sentinels:
                w = sentinels[obj]
                if w.wid in self.workers:
                    self._drain(w)
                    w.proc.join(timeout=5)
                    self._lost(w, reason=f"worker process died (exit code {w.proc.exitcode})", charge_all=True)

    def _drain(self, w: _Worker) -> None:
        while True:
            try:
                if not w.result_conn.poll():
                    return
                msg = w.result_conn.recv()
            except (EOFError, OSError):
                return
            except Exception:  # noqa: BLE001 - a message cut short by a dying worker
                return
            self._handle(w, msg)

    def _handle(self, w: _Worker, msg: tuple) -> None:
        kind = msg[0]
        if kind == "ready":
            w.ready = True
            self.startup_failures = 0
        elif kind == "start":
            _, _, index, _ = msg
            if index in w.running:
                w.running[index] = time.monotonic()
        elif kind == "done":
            _, _, index, record = msg
            if w.running.pop(index, None) is not None and index not in self.outcomes:
                self._finish(Outcome(index, record, None, self.attempts[index] + 1, w.wid))
        elif kind == "failed":
            _, _, index, tb = msg
            if w.running.pop(index, None) is not None:
                self._charge(index, "harness error in worker:\n" + tb)

    def _check_deadlines(self) -> None:
        now = time.monotonic()
        for w in list(self.workers.values()):
            if not w.ready:
                if now - w.started_at > self.cfg.startup_timeout:
                    self._kill(w)
                    self._lost(w, reason=f"worker did not start within {self.cfg.startup_timeout:.0f} s", charge_all=True)
                continue
            overdue = [i for i, t0 in w.running.items() if now - t0 > self.cfg.task_timeout]
            if overdue:
                self._kill(w)
                self._drain(w)
                for index in overdue:
                    if w.running.pop(index, None) is not None:
                        self._charge(index, f"episode hung: no result {self.cfg.task_timeout:.1f} s after it started; worker killed")
                self._lost(w, reason="collateral of a hung episode", charge_all=False)

    # -- bookkeeping -----------------------------------------------------
    def _lost(self, w: _Worker, *, reason: str, charge_all: bool) -> None:
        """Worker `w` is gone: forget it and retry (or give up on) what it ran."""
        self._kill(w)
        self.workers.pop(w.wid, None)
        for conn in (w.task_conn, w.result_conn):
            try:
                conn.close()
            except OSError:
                pass
        if not w.ready:
            self.startup_failures += 1
            if self.startup_failures >= self.cfg.max_startup_failures:
                self._give_up(f"{self.startup_failures} worker processes in a row failed to start ({reason})")
        self._release(w, reason=reason, charge_all=charge_all)

    def _members(self):
        return self.workers.values()

    @staticmethod
    def _kill(w: _Worker) -> None:
        if w.proc.is_alive():
            w.proc.kill()
        w.proc.join(timeout=10)

    def _shutdown(self) -> None:
        for w in self.workers.values():
            try:
                w.task_conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        deadline = time.monotonic() + 10
        for w in self.workers.values():
            w.proc.join(timeout=max(0.1, deadline - time.monotonic()))
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join(timeout=5)
            for conn in (w.task_conn, w.result_conn):
                try:
                    conn.close()
                except OSError:
                    pass
        self.workers.clear()

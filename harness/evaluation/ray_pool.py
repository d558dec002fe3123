"""Episodes on Ray: the same contract as `run_pool`, on actors instead of local processes.

One actor holds one replicated simulator per runner thread; actors live as long
as the driver process and are reused across episodes and candidates. Dispatch
is unordered (whichever actor has a free thread takes the next episode, results
are handled as they arrive), so no straggler blocks the batch. Retry semantics
match the local pool: an actor that dies is replaced and every episode it was
running is retried once (a second failure is an infrastructure failure); an
episode that overruns `task_timeout` gets its actor killed and replaced, the
episode charged, the actor's other episodes requeued uncharged.

Nothing assumes a shared filesystem: the candidate folder travels through the
object store, each episode's log comes back with its record and is written
on the driver (where the result cache also lives).
"""

from __future__ import annotations

import collections
import hashlib
import json
import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from harness.errors import UserError
from harness.evaluation.pool import Outcome, PoolConfig, RetryBookkeeping
from harness.fileio import write_bytes_atomic

FOLDER_ARG = "candidate_dir"
MAX_DEFAULT_ACTORS = 256  # without --workers or --in-flight, on a cluster with room for more  # the factory argument naming a folder that must travel to the actors


@dataclass(frozen=True)
class RayOptions:
    address: str | None = None  # attach to this cluster; None: start a local instance for the call
    num_cpus: float = 1.0       # per actor, from the executor profile
    num_gpus: float = 0.0


@dataclass
class _Actor:
    aid: int
    handle: object
    load_ref: object
    started_at: float
    ready: bool = False
    running: dict = field(default_factory=dict)  # task index -> (object ref, dispatch time)


class _Fleet:
    """The driver's idle actors, kept between evaluations (keyed by resource
    shape). Idle actors of another shape are killed when a new shape is asked
    for, so they do not hold resources the new actors need."""

    def __init__(self):
        self.idle: dict[tuple, list] = collections.defaultdict(list)
        self.lock = threading.Lock()

    def take(self, shape: tuple) -> object | None:
        import ray

        with self.lock:
            for other in [s for s in self.idle if s != shape]:
                for handle in self.idle.pop(other):
                    try:
                        ray.kill(handle, no_restart=True)
                    except Exception:  # noqa: BLE001 - from an earlier session, already gone
                        pass
            return self.idle[shape].pop() if self.idle[shape] else None

    def give_back(self, shape: tuple, handle) -> None:
        with self.lock:
            self.idle[shape].append(handle)

    def forget(self) -> None:
        with self.lock:
            self.idle.clear()


_fleet = _Fleet()


def connect(address: str | None) -> None:
    """Attach to `address`, or start a local Ray instance (once per process)."""
    try:
        import ray
    except ImportError:
        raise UserError("the ray backend needs Ray: pip install -e \".[ray]\"") from None
    if ray.is_initialized():
        return
    _fleet.forget()
    try:
        if address:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
        else:
            ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = f"at {address}" if address else "locally"
        raise UserError(f"cannot start or reach a Ray cluster {where}: {exc}; check --ray-address "
                        "(e.g. ray://host:10001 or auto)") from None


def actor_count(options: RayOptions, in_flight: int | None, requested: int | None) -> int:
    """Actors to use: as asked, else as many as the cluster can place (at most `in_flight`)."""
    if requested:
        return max(1, requested)
    import ray

    resources = ray.cluster_resources()
    caps = [in_flight or MAX_DEFAULT_ACTORS]
    if options.num_cpus > 0:
        caps.append(int(resources.get("CPU", 1) // options.num_cpus))
    if options.num_gpus > 0:
        caps.append(int(resources.get("GPU", 0) // options.num_gpus))
    return max(1, min(caps))


def run_ray_pool(tasks: list[dict], factory_ref: str, factory_args: dict, config: PoolConfig,
                 options: RayOptions, on_outcome: Callable[[Outcome], None] | None = None) -> dict[int, Outcome]:
    """Run every task on Ray actors; return outcomes by index (see `run_pool`)."""
    return _RaySupervisor(tasks, factory_ref, factory_args, config, options, on_outcome).run()


class _RaySupervisor(RetryBookkeeping):
    def __init__(self, tasks, factory_ref, factory_args, config: PoolConfig, options: RayOptions, on_outcome):
        import ray

        from harness.evaluation.ray_actor import MAX_THREADS, EpisodeActor, pack_folder

        self.ray = ray
        self.tasks = {t["index"]: t for t in tasks}
        self.pending = collections.deque(t["index"] for t in tasks)
        self.cfg = config
        self.options = options
        self.on_outcome = on_outcome
        # actors of an earlier Ray session are gone: the job id is part of the key
        self.shape = (ray.get_runtime_context().get_job_id(), options.num_cpus, options.num_gpus)
        self.actor_class = ray.remote(EpisodeActor).options(
            num_cpus=options.num_cpus, num_gpus=options.num_gpus, max_concurrency=MAX_THREADS,
            max_restarts=0)
        args = dict(factory_args)
        folder = args.get(FOLDER_ARG)
        blob = pack_folder(Path(folder)) if folder else None
        self.key = hashlib.sha256(json.dumps([factory_ref, args], sort_keys=True, default=str).encode()
                                  + (blob or b"")).hexdigest()
        self.blob_ref = ray.put(blob) if blob is not None else None
        self.factory_ref, self.factory_args = factory_ref, args
        self.actors: dict[int, _Actor] = {}
        self.outcomes: dict[int, Outcome] = {}
        self.attempts = collections.Counter()
        self.next_aid = 0
        self.startup_failures = 0

    # -- lifecycle -------------------------------------------------------
    def run(self) -> dict[int, Outcome]:
        try:
            while len(self.outcomes) < len(self.tasks):
                self._top_up_actors()
                self._dispatch()
                self._wait_and_handle(0.5)
                self._check_deadlines()
        except BaseException:
            for a in list(self.actors.values()):
                self._kill(a)
            self.actors.clear()
            raise
        for a in self.actors.values():  # healthy and idle: keep for the next evaluation
            _fleet.give_back(self.shape, a.handle)
        self.actors.clear()
        return self.outcomes

    def _start(self) -> None:
        handle = _fleet.take(self.shape) or self.actor_class.remote()
        load_ref = handle.load.remote(self.key, self.factory_ref, self.factory_args, self.blob_ref, self.cfg.threads)
        self.actors[self.next_aid] = _Actor(self.next_aid, handle, load_ref, time.monotonic())
        self.next_aid += 1

    def _top_up_actors(self) -> None:
        unfinished = len(self.tasks) - len(self.outcomes)
        need = len(self.pending) + sum(len(a.running) for a in self.actors.values())
        want = min(self.cfg.workers, need, unfinished)
        while len(self.actors) < want:
            self._start()

    def _dispatch(self) -> None:
        total = sum(len(a.running) for a in self.actors.values())
        for a in sorted(self.actors.values(), key=lambda a: len(a.running)):
            while self.pending and a.ready and len(a.running) < self.cfg.threads and total < self.cfg.in_flight:
                index = self.pending.popleft()
                task = self.tasks[index]
                ref = a.handle.run.remote(task["episode"], bool(task.get("log_path")))
                a.running[index] = (ref, time.monotonic())
                total += 1

    # -- events ----------------------------------------------------------
    def _wait_and_handle(self, timeout: float) -> None:
        owners = {}
        for a in self.actors.values():
            if not a.ready:
                owners[a.load_ref] = (a, None)
            for index, (ref, _) in a.running.items():
                owners[ref] = (a, index)
        if not owners:
            return
        refs = list(owners)
        ready, _ = self.ray.wait(refs, num_returns=1, timeout=timeout)
        if ready:
            ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
        for ref in ready:
            a, index = owners[ref]
            if a.aid not in self.actors:
                continue  # lost while handling an earlier result
            if index is None:
                self._handle_load(a, ref)
            elif index in a.running:
                self._handle_result(a, index, ref)

    def _handle_load(self, a: _Actor, ref) -> None:
        try:
            self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            self._lost(a, reason=f"actor failed to start: {_short(exc)}", charge_all=True)
            return
        a.ready = True
        self.startup_failures = 0

    def _handle_result(self, a: _Actor, index: int, ref) -> None:
        try:
            record, log = self.ray.get(ref)
        except self.ray.exceptions.RayActorError as exc:
            self._lost(a, reason=f"Ray actor died ({_short(exc)})", charge_all=True)
            return
        except self.ray.exceptions.RayTaskError as exc:
            a.running.pop(index, None)
            self._charge(index, "harness error in Ray actor:\n" + str(exc))
            return
        a.running.pop(index, None)
        if index in self.outcomes:
            return
        log_path = self.tasks[index].get("log_path")
        if log_path and log is not None:
            write_bytes_atomic(Path(log_path), log)
        self._finish(Outcome(index, record, None, self.attempts[index] + 1, a.aid))

    def _check_deadlines(self) -> None:
        now = time.monotonic()
        for a in list(self.actors.values()):
            if not a.ready:
                if now - a.started_at > self.cfg.startup_timeout:
                    self._lost(a, reason=f"actor did not start within {self.cfg.startup_timeout:.0f} s "
                                         "(does the cluster have the resources the profile asks for?)",
                               charge_all=True)
                continue
            overdue = [i for i, (_, t0) in a.running.items() if now - t0 > self.cfg.task_timeout]
            if overdue:
                for index in overdue:
                    a.running.pop(index, None)
                    self._charge(index, f"episode hung: no result {self.cfg.task_timeout:.1f} s after it "
                                        "started; Ray actor killed")
                self._lost(a, reason="collateral of a hung episode", charge_all=False)

    # -- bookkeeping -----------------------------------------------------
    def _lost(self, a: _Actor, *, reason: str, charge_all: bool) -> None:
        self._kill(a)
        self.actors.pop(a.aid, None)
        if not a.ready:
            self.startup_failures += 1
            if self.startup_failures >= self.cfg.max_startup_failures:
                self._give_up(f"{self.startup_failures} Ray actors in a row failed to start ({reason})")
        self._release(a, reason=reason, charge_all=charge_all)

    def _members(self):
        return self.actors.values()

    def _kill(self, a: _Actor) -> None:
        try:
            self.ray.kill(a.handle, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def split_concurrency(total: int | None, actors: int) -> int | None:
    """Each actor's share of the inference profile's concurrency (at least 1)."""
    if not total:
        return None
    return max(1, math.ceil(total / max(1, actors)))

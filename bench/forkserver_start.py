"""Shared by the benchmarks: start the evaluation's forkserver as `evaluate()`
does, and time it."""

from __future__ import annotations

import time


def start_forkserver(executor: str) -> float:
    """Seconds from asking for the pool's `worker_context` (with the executor's
    worker modules) until a first process forked from the forkserver has run:
    the forkserver's start and its preload imports, which the first evaluation
    of a process pays. Later evaluations in this process fork from it."""
    from executors import load_executor
    from harness.evaluation.pool import worker_context

    start = time.perf_counter()
    ctx = worker_context(load_executor(executor).spec.worker_modules)
    proc = ctx.Process(target=time.sleep, args=(0,))
    proc.start()  # returns once the forkserver has preloaded and forked
    proc.join()
    return time.perf_counter() - start

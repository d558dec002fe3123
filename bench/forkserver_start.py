"""Shared by the benchmarks: start the evaluation's forkserver as `evaluate()`
does, and time it; and the same for the commands of a run, which fork from the
run's warm forkserver (harness.evaluation.warm)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_COMMAND = ("import sys; sys.path[:0] = {paths!r}; from forkserver_start import start_forkserver; "
            "print(start_forkserver({executor!r}, {scope!r}))")


def start_forkserver(executor: str, warm_scope: str | None = None) -> float:
    """Seconds from asking for the pool's `worker_context` (with the executor's
    worker modules) until a first process forked from the forkserver has run:
    the forkserver's start and its preload imports, which the first evaluation
    of a process pays. Later evaluations in this process fork from it.
    `warm_scope`: a run's folder, whose warm forkserver is used (started if none runs)."""
    from executors import load_executor
    from harness.evaluation.pool import worker_context

    modules = load_executor(executor).spec.worker_modules  # evaluate() has it loaded before it starts workers
    start = time.perf_counter()
    ctx = worker_context(modules, warm_scope)
    proc = ctx.Process(target=time.sleep, args=(0,))
    proc.start()  # returns once the forkserver has preloaded and forked
    proc.join()
    return time.perf_counter() - start


def run_commands_forkserver(executor: str, commands: int = 5) -> list[float]:
    """`start_forkserver` in COMMANDS fresh processes one after another, all of one scratch
    run: the first starts the run's warm forkserver, the later ones fork from it. The
    server stops when the scratch run folder is removed."""
    bench = Path(__file__).resolve().parent
    paths = [str(bench.parent), str(bench)]
    env = dict(os.environ, ARCHITECT_WARM_FORKSERVER="1")
    with tempfile.TemporaryDirectory(prefix="bench-warm-run-") as scope:
        return [float(subprocess.run([sys.executable, "-c", _COMMAND.format(paths=paths, executor=executor,
                                                                              scope=scope)],
                                     capture_output=True, text=True, check=True, env=env).stdout.split()[-1])
                for _ in range(commands)]

"""The environment a forkserver (and so every worker forked from it) starts with: native
thread pools capped, and this process's sys.path (shared by the pool's private
forkserver and the warm one of harness.evaluation.warm)."""

from __future__ import annotations

import os
import sys

from harness.envvars import temporary_environ

# Native thread pools (OpenBLAS spins its idle threads) oversubscribe the cores
# when every worker process starts one; workers are the unit of parallelism.
_THREAD_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def single_threaded_native_libs():
    """Children inherit the environment at start: the thread caps the user has not set."""
    return temporary_environ(**{name: "1" for name in _THREAD_ENV if name not in os.environ})


def forkserver_sys_path():
    """The forkserver (started with the first worker) inherits the environment too.
    Python 3.11's forkserver imports its preload list without applying the sys.path
    it is handed, so it would find those modules wherever its own sys.path leads
    (the current folder first, or another checkout's editable install) while the
    workers run this process's: give it this process's sys.path as PYTHONPATH, with
    PYTHONSAFEPATH so that nothing is put before it."""
    entries = [os.path.abspath(entry or os.curdir) for entry in sys.path if os.pathsep not in entry]
    return temporary_environ(PYTHONPATH=os.pathsep.join(entries), PYTHONSAFEPATH="1")

"""One process at a time per run: a non-blocking file lock with the holder's pid."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from harness.errors import UserError


class RunBusy(UserError):
    pass


def holder_pid(lock_path: Path) -> str:
    try:
        return (lock_path.parent / (lock_path.name + ".pid")).read_text().strip() or "?"
    except OSError:
        return "?"


@contextmanager
def run_lock(lock_path: Path, timeout: float = 0.5, what: str = "run"):
    """Hold a lock (the run's, or one staging folder's); a second process gets
    RunBusy naming the holder."""
    lock = FileLock(str(lock_path), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise RunBusy(
            f"{what} is busy (held by pid {holder_pid(lock_path)}): {lock_path.parent} "
            "is being worked on by another architect process; wait for it or stop it",
            exit_code=3,
        ) from None
    pid_file = lock_path.parent / (lock_path.name + ".pid")
    try:
        pid_file.write_text(str(os.getpid()))
        yield
    finally:
        try:
            pid_file.unlink(missing_ok=True)
        finally:
            lock.release()

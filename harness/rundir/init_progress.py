"""An `init` in progress, visible from outside: while a run is built in its
hidden folder, `<runs>/.init-<run id>.lock` is held (one init per run id) and
`<runs>/.init-<run id>.json` says which process builds it, where, and what it
is doing, so `status` can report it and a second init refuses at once."""

from __future__ import annotations

import json
import os
from pathlib import Path

from filelock import FileLock, Timeout

from harness.fileio import write_json_atomic
from harness.rundir.lock import RunBusy
from harness.rundir.records import now_iso


def _files(runs_dir: Path, run_id: str) -> tuple[Path, Path]:
    return runs_dir / f".init-{run_id}.lock", runs_dir / f".init-{run_id}.json"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running(runs_dir: Path, run_id: str) -> dict | None:
    """{run_id, pid, folder, doing, started, updated} of a live init of `run_id`, else None."""
    _, info = _files(Path(runs_dir), run_id)
    try:
        record = json.loads(info.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int) or not _alive(record["pid"]):
        return None
    return record


def episodes_logged(record: dict) -> dict[str, int]:
    """Episode logs written so far in the build, per evaluation of iteration 0 (smoke, eval)."""
    iteration0 = Path(record["folder"]) / "iterations" / "0"
    return {kind: len(list((iteration0 / kind / "episodes").glob("*.jsonl"))) for kind in ("smoke", "eval")}


def describe(record: dict) -> str:
    logged = episodes_logged(record)
    return (f"run {record['run_id']!r} is being created by `architect init` (pid {record['pid']}, building in "
            f"{record['folder']}, since {record['started']}): {record['doing']}; episodes logged so far: "
            f"smoke {logged['smoke']}, performance tier {logged['eval']}")


class InitInProgress:
    """Held for the whole build; `say(text)` records what the init is doing."""

    def __init__(self, runs_dir: Path, run_id: str, folder: Path):
        self.run_id, self.folder = run_id, folder
        lock_path, self.info = _files(Path(runs_dir), run_id)
        self.lock = FileLock(str(lock_path), timeout=0)
        self.record: dict = {}

    def __enter__(self) -> "InitInProgress":
        try:
            self.lock.acquire()
        except Timeout:
            other = running(self.info.parent, self.run_id)
            raise RunBusy((describe(other) if other else f"another `architect init` of run {self.run_id!r} holds "
                           f"{self.lock.lock_file}") + "; wait for it (`architect status "
                          f"{self.run_id}`) or stop that process", exit_code=3) from None
        started = now_iso()
        self.record = {"run_id": self.run_id, "pid": os.getpid(), "folder": str(self.folder), "started": started,
                       "updated": started, "doing": "starting"}
        write_json_atomic(self.info, self.record)
        return self

    def say(self, text: str) -> None:
        self.record.update(doing=text, updated=now_iso())
        write_json_atomic(self.info, self.record)

    def __exit__(self, *exc) -> None:
        try:
            self.info.unlink(missing_ok=True)
            Path(self.lock.lock_file).unlink(missing_ok=True)  # before release: no one can hold it now
        finally:
            self.lock.release()

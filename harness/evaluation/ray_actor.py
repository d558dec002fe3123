"""The Ray actor: one long-lived process holding the runners (and so the
simulators) of the candidate it was last given.

An actor is created once per driver and reused across episodes and
candidates: `load` builds the runners of a new candidate (unpacking the
candidate folder, which travels through the object store, into the actor's
own scratch folder) and is a no-op for the candidate already loaded. `run`
plays one episode on a free runner and returns the record together with the
bytes of the episode log, so nothing assumes the driver's filesystem.
"""

from __future__ import annotations

import io
import os
import queue
import shutil
import tarfile
import tempfile
import traceback
import uuid
from pathlib import Path

from harness.errors import UserError
from harness.evaluation.worker import resolve, setup_failure_record

# Runner threads an actor can serve at once; the driver decides how many it uses.
MAX_THREADS = 64
MAX_FOLDER_BYTES = 64 * 2**20
SKIPPED = frozenset({"__pycache__", ".git", ".venv", "episodes"})


def pack_folder(folder: Path) -> bytes:
    """The folder as an in-memory gzip tarball (what the object store carries),
    without caches, git data and episode logs."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(str(folder), arcname="candidate",
                filter=lambda info: None if SKIPPED & set(Path(info.name).parts) else info)
    if buffer.tell() > MAX_FOLDER_BYTES:
        raise UserError(f"{folder}: the candidate folder packs to {buffer.tell() / 2**20:.0f} MiB, more than "
                        f"{MAX_FOLDER_BYTES // 2**20} MiB to ship to Ray actors; evaluate a folder holding only "
                        "the candidate (graph.json and its files)")
    return buffer.getvalue()


def _unpack(blob: bytes, into: Path) -> Path:
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        tar.extractall(into, filter="data")
    return into / "candidate"


class EpisodeActor:
    def __init__(self):
        self.scratch = Path(tempfile.mkdtemp(prefix="architect-actor-"))
        self.key: str | None = None
        self.runners: queue.Queue = queue.Queue()
        self.all_runners: list = []
        self.setup_error: str | None = None

    def load(self, key: str, factory_ref: str, factory_args: dict, folder_blob: bytes | None,
             threads: int) -> tuple[int, bool]:
        """Build `threads` runners for the candidate `key` (kept if already loaded)."""
        if key == self.key and len(self.all_runners) >= threads:
            return os.getpid(), self.setup_error is None
        self._close_runners()
        self.key, self.setup_error = key, None
        args = dict(factory_args)
        if folder_blob is not None:
            target = self.scratch / uuid.uuid4().hex
            args["candidate_dir"] = str(_unpack(folder_blob, target))
        try:
            factory = resolve(factory_ref)
            for _ in range(threads):
                runner = factory(**args)
                self.all_runners.append(runner)
                self.runners.put(runner)
        except BaseException:  # noqa: BLE001 - agent setup code may raise anything
            self.setup_error = traceback.format_exc()
        return os.getpid(), self.setup_error is None

    def run(self, episode: dict, want_log: bool) -> tuple[dict, bytes | None]:
        """One episode: (record, JSONL log bytes or None). A harness-side
        exception propagates (the driver retries the episode)."""
        if self.setup_error is not None:
            return setup_failure_record(self.setup_error), None
        runner = self.runners.get()
        log_path = self.scratch / f"{uuid.uuid4().hex}.jsonl" if want_log else None
        try:
            record = runner.run(episode, str(log_path) if log_path else None)
            log = log_path.read_bytes() if log_path is not None and log_path.is_file() else None
        finally:
            self.runners.put(runner)
            if log_path is not None:
                log_path.unlink(missing_ok=True)
        return record, log

    def pid(self) -> int:
        return os.getpid()

    def _close_runners(self) -> None:
        for runner in self.all_runners:
            try:
                runner.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
        self.all_runners = []
        self.runners = queue.Queue()
        for old in self.scratch.iterdir():
            if old.is_dir():
                shutil.rmtree(old, ignore_errors=True)

"""A progress bar on stderr (rich), or nothing. Where stderr is not a terminal
(a coding agent reading a log), plain lines instead, since rich draws a bar
there only when it ends: one each tenth of the episodes, and at least every
HEARTBEAT_SECONDS while the evaluation runs (slow episodes, e.g. LIBERO's)."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)


HEARTBEAT_SECONDS = 30.0


class _Bar:
    def __init__(self, progress: Progress | None, task_id, lines: tuple[Console, str, int] | None = None,
                 counted: str = "success"):
        self.progress = progress
        self.counted = counted  # the name the successes are shown under (EQA: accuracy)
        self.task_id = task_id
        self.lines = lines  # (console, label, total): plain progress lines
        self.started = self.last_line = time.monotonic()
        self.lock = threading.Lock()
        self.done = 0
        self.successes = 0
        self.failures = 0

    def _status(self) -> str:
        scored = self.done - self.failures
        rate = f"{self.successes}/{scored} ({100 * self.successes / scored:.0f}%)" if scored else "-"
        return f"{self.counted} {rate}  infra {self.failures}"

    def advance(self, success: bool | None) -> None:
        """One more episode finished: succeeded, failed, or (None) an infrastructure failure."""
        with self.lock:
            self.done += 1
            if success:
                self.successes += 1
            elif success is None:
                self.failures += 1
            if self.progress is not None:
                self.progress.update(self.task_id, advance=1, status=self._status())
            elif self.lines is not None:
                total = self.lines[2]
                tenth = self.done * 10 // total > (self.done - 1) * 10 // total
                if self.done == total or tenth or time.monotonic() - self.last_line >= HEARTBEAT_SECONDS:
                    self._line("")

    def heartbeat(self) -> None:
        """A line when none came for HEARTBEAT_SECONDS (episodes still running)."""
        with self.lock:
            if self.done < self.lines[2] and time.monotonic() - self.last_line >= HEARTBEAT_SECONDS:
                self._line(", running")

    def _line(self, note: str) -> None:
        console, label, total = self.lines
        self.last_line = time.monotonic()
        console.print(f"{label}: {self.done}/{total} episodes, {self._status()}{note}, "
                      f"{self.last_line - self.started:.0f} s", highlight=False, soft_wrap=True)


@contextmanager
def progress_bar(label: str, total: int, enabled: bool, counted: str = "success"):
    if not enabled or total == 0:
        yield _Bar(None, None)
        return
    console = Console(stderr=True)
    if not console.is_terminal:
        bar = _Bar(None, None, (console, label, total), counted)
        stop = threading.Event()
        ticker = threading.Thread(target=_tick, args=(bar, stop), daemon=True, name="progress-heartbeat")
        ticker.start()
        try:
            yield bar
        finally:
            stop.set()
            ticker.join()
        return
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[status]}"),
        console=console, transient=False,
    )
    with progress:
        task_id = progress.add_task(label, total=total, status="")
        yield _Bar(progress, task_id, counted=counted)


def _tick(bar: _Bar, stop: threading.Event) -> None:
    while not stop.wait(HEARTBEAT_SECONDS / 6):
        bar.heartbeat()

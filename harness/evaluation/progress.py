"""A progress bar on stderr (rich), or nothing. Where stderr is not a terminal
(a coding agent reading a log), one plain line each tenth of the episodes
instead, since rich draws a bar there only when it ends."""

from __future__ import annotations

import time
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)


class _Bar:
    def __init__(self, progress: Progress | None, task_id, lines: tuple[Console, str, int] | None = None):
        self.progress = progress
        self.task_id = task_id
        self.lines = lines  # (console, label, total): plain progress lines
        self.started = time.monotonic()
        self.done = 0
        self.successes = 0
        self.failures = 0

    def advance(self, success: bool | None) -> None:
        """One more episode finished: succeeded, failed, or (None) an infrastructure failure."""
        self.done += 1
        if success:
            self.successes += 1
        elif success is None:
            self.failures += 1
        scored = self.done - self.failures
        rate = f" ({100 * self.successes / scored:.0f}%)" if scored else ""
        status = f"success {self.successes}{rate}  infra {self.failures}"
        if self.progress is not None:
            self.progress.update(self.task_id, advance=1, status=status)
        elif self.lines is not None:
            console, label, total = self.lines
            if self.done == total or self.done * 10 // total > (self.done - 1) * 10 // total:
                console.print(f"{label}: {self.done}/{total} episodes, {status}, "
                              f"{time.monotonic() - self.started:.0f} s", highlight=False, soft_wrap=True)


@contextmanager
def progress_bar(label: str, total: int, enabled: bool):
    if not enabled or total == 0:
        yield _Bar(None, None)
        return
    console = Console(stderr=True)
    if not console.is_terminal:
        yield _Bar(None, None, (console, label, total))
        return
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[status]}"),
        console=console, transient=False,
    )
    with progress:
        task_id = progress.add_task(label, total=total, status="")
        yield _Bar(progress, task_id)

"""A progress bar on stderr (rich), or nothing."""

from __future__ import annotations

from contextlib import contextmanager

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)


class _Bar:
    def __init__(self, progress: Progress | None, task_id):
        self.progress = progress
        self.task_id = task_id
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
        if self.progress is not None:
            scored = self.done - self.failures
            rate = f" ({100 * self.successes / scored:.0f}%)" if scored else ""
            self.progress.update(self.task_id, advance=1,
                                 status=f"success {self.successes}{rate}  infra {self.failures}")


@contextmanager
def progress_bar(label: str, total: int, enabled: bool):
    if not enabled or total == 0:
        yield _Bar(None, None)
        return
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[status]}"),
        console=Console(stderr=True), transient=False,
    )
    with progress:
        task_id = progress.add_task(label, total=total, status="")
        yield _Bar(progress, task_id)

"""`architect status RUN --watch`: follow a running loop until it stops."""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from harness.rundir import ledger
from harness.rundir.display import ledger_table
from harness.rundir.layout import RunPaths
from harness.rundir.status import run_status

RECENT_ROWS = 8


def following(report: dict) -> bool:
    """A loop is at work: the state says running and a process holds the run lock."""
    return report["state"]["status"] == "running" and report["busy"] is not None


def watch(ref, runs_dir=None, interval: float = 2.0, console: Console | None = None) -> dict:
    """Redraw the status and the latest ledger rows every `interval` seconds on
    stderr while a loop works on the run; return the last status report."""
    console = console or Console(stderr=True)
    report = run_status(ref, runs_dir)
    with Live(_view(report), console=console, refresh_per_second=4, transient=False) as live:
        while following(report):
            time.sleep(interval)
            report = run_status(ref, runs_dir)
            live.update(_view(report))
    return report


def _view(report: dict):
    rows = ledger.read_rows(RunPaths(Path(report["run"])).ledger)
    note = ("following the running loop (Ctrl-C stops watching, not the loop)" if following(report)
            else "not running: nothing more to follow")
    return Group(Text(report["summary"]), ledger_table(rows[-RECENT_ROWS:], title="latest attempts"),
                 Text(note, style="dim"))


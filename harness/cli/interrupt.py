"""Stopping a long command (init, smoke, evaluate, certify, loop) with Ctrl-C or SIGTERM.

Both signals raise `Interrupted` (a KeyboardInterrupt) in the main thread, even
where the shell started the command with SIGINT ignored (a background job).
The evaluation supervisor kills its workers on the way out; then every process
this command started and that is still alive (the forkserver, the resource
tracker, a worker's own children; not a run's warm forkserver, which outlives
commands by design) is terminated (killed after a second), one line on stderr says what was
stopped and what to run to continue (with --json also the one JSON object), and
the exit code is 128 + the signal's number (130, 143). A second signal during
that clean-up is ignored, so the clean-up finishes.
"""

from __future__ import annotations

import functools
import json
import signal
import sys
from typing import Callable

import click

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    def __init__(self, signum: int, descendants: list):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.descendants = descendants  # this process's descendants when the signal came


WARM_SERVER = "harness.evaluation.warm import serve"


def _children() -> list:
    import psutil

    try:
        return psutil.Process().children()
    except psutil.Error:
        return []


def _cmdline(p) -> list:
    import psutil

    try:
        return p.cmdline()
    except psutil.Error:
        return []


def _descendants() -> list:
    """This process's descendants, but for a run's warm forkserver and what it forked: that
    server outlives commands by design (harness.evaluation.warm: it stops itself when idle,
    and other commands of the run may be using it); this command's own workers forked from
    it are killed by the evaluation supervisor."""
    import psutil

    try:
        everyone = psutil.Process().children(recursive=True)
    except psutil.Error:
        return []
    kept = set()
    for p in everyone:
        if WARM_SERVER in " ".join(_cmdline(p)):
            try:
                kept |= {p.pid, *(c.pid for c in p.children(recursive=True))}
            except psutil.Error:
                kept.add(p.pid)
    return [p for p in everyone if p.pid not in kept]


def _raise(signum, frame) -> None:
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    raise Interrupted(signum, _descendants())


def stop_descendants(known: list, timeout: float = 1.0) -> int:
    """Stop every process in `known` and every current descendant (SIGTERM, then SIGKILL after
    `timeout`: multiprocessing's resource tracker ignores SIGTERM); how many there were."""
    import psutil

    procs = {p.pid: p for p in known + _descendants()}
    alive = [p for p in procs.values() if p.is_running()]
    for p in alive:
        try:
            p.terminate()
        except psutil.Error:
            pass
    _, left = psutil.wait_procs(alive, timeout=timeout)
    for p in left:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(left, timeout=timeout)
    return len(procs)


def _stopped(exc: KeyboardInterrupt, resume: str, as_json: bool):
    """Stop what is left, say so, exit 128 + the signal (signals stay ignored until the exit)."""
    signum = getattr(exc, "signum", signal.SIGINT)
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    stopped = stop_descendants(getattr(exc, "descendants", []))
    name = signal.Signals(signum).name
    kept = "; the run's warm forkserver stays for its next command (it stops itself when idle)" if any(
        WARM_SERVER in " ".join(_cmdline(p)) for p in _children()) else ""
    line = (f"interrupted ({name}): stopped the episodes in flight and {stopped} process(es) it "
            f"had started (workers, forkserver, resource tracker){kept}; {resume}")
    click.echo(line, err=True)
    if as_json:
        click.echo(json.dumps({"ok": False, "error": line, "kind": "Interrupted", "interrupted": name}))
    sys.exit(128 + signum)


def interruptible(resume: Callable[[dict], str]):
    """Decorate a command so SIGINT/SIGTERM stop it cleanly; `resume(kwargs)` says what the run
    holds and what to run to continue."""

    def decorate(command):
        @functools.wraps(command)
        def wrapper(*args, **kwargs):
            previous = {s: signal.signal(s, _raise) for s in SIGNALS}
            try:
                return command(*args, **kwargs)
            except KeyboardInterrupt as exc:
                previous = {}  # ignored until the exit
                _stopped(exc, resume(kwargs), kwargs.get("as_json", False))
            finally:
                for s, handler in previous.items():
                    signal.signal(s, handler)

        return wrapper

    return decorate

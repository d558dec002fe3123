"""The crash journal: the intent of a commit or discard, written before the
first irreversible step and removed after the last one."""

from __future__ import annotations

from harness.fileio import read_json, write_json_atomic
from harness.rundir.layout import RunPaths


def begin(paths: RunPaths, entry: dict) -> None:
    write_json_atomic(paths.journal, entry)


def pending(paths: RunPaths) -> dict | None:
    if not paths.journal.exists():
        return None
    try:
        return read_json(paths.journal)
    except ValueError:
        # os.replace makes the journal appear whole or not at all; a damaged one
        # can only be a foreign file, and nothing irreversible happened under it.
        return {"op": "unknown"}


def end(paths: RunPaths) -> None:
    paths.journal.unlink(missing_ok=True)

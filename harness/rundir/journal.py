"""The crash journal: the intent of a commit or discard, written before the
first irreversible step and removed after the last one."""

from __future__ import annotations

from harness.errors import UserError
from harness.fileio import read_json, write_json_atomic
from harness.rundir.layout import RunPaths
from harness.schemas import validate_instance


def begin(paths: RunPaths, entry: dict) -> None:
    write_json_atomic(paths.journal, entry)


def pending(paths: RunPaths) -> dict | None:
    """The pending entry; one that cannot be read or does not match
    schemas/journal.schema.json comes back as `{"op": "unknown", "damage": why}`."""
    if not paths.journal.exists():
        return None
    try:
        entry = read_json(paths.journal, "commit journal")
    except UserError as exc:
        return {"op": "unknown", "damage": exc.message}
    problems = validate_instance("journal", entry)
    if problems:
        return {"op": "unknown", "damage": f"{paths.journal}: does not match journal.schema.json: {problems[0]}"}
    return entry


def end(paths: RunPaths) -> None:
    paths.journal.unlink(missing_ok=True)

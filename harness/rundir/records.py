"""Schema-checked reading and writing of the run's JSON records.

The run directory's readers: `read_manifest`, `read_iteration_metrics` and
`committed_iterations` here, `state.read` (state.json) and `ledger.read_rows`
(ledger.jsonl). Nothing else parses those files."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.fileio import read_json, write_json_atomic
from harness.schemas import validate_instance


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def check_record(schema: str, obj: Any, where: Path | str) -> None:
    problems = validate_instance(schema, obj)
    if problems:
        raise UserError(f"{where}: does not match {schema}.schema.json: " + "; ".join(problems[:5]),
                        details=problems)


def read_record(schema: str, path: Path) -> dict:
    obj = read_json(path, f"{schema} record")
    _check_format_version(schema, obj, path)
    check_record(schema, obj, path)
    return obj


def _check_format_version(schema: str, obj: Any, path: Path) -> None:
    """A record written by another format version is refused by name, before its schema errors."""
    from harness.schemas import load_schema

    expected = load_schema(schema).get("properties", {}).get("schema_version", {}).get("const")
    if expected is None or not isinstance(obj, dict) or "schema_version" not in obj:
        return
    found = obj["schema_version"]
    if found != expected:
        newer = isinstance(found, int) and found > expected
        raise UserError(
            f"{path}: run format version {found!r}, but this architect reads format version {expected} "
            + ("(the run was written by a newer architect: upgrade architect to read it)" if newer else
               "(no migration from that version exists: start a new run with `architect init`)"))


def write_record(schema: str, path: Path, obj: dict) -> None:
    check_record(schema, obj, path)
    write_json_atomic(path, obj)


def read_manifest(paths) -> dict:
    """manifest.json of a run (`paths`: a RunPaths)."""
    return read_record("manifest", paths.manifest)


def read_metrics(path: Path) -> dict | None:
    """A tier's metrics.json, or None when the tier was not evaluated."""
    return read_record("metrics", path) if path.is_file() else None


def read_iteration_metrics(paths, iteration: int) -> dict | None:
    """The performance-tier metrics of a committed iteration, or None."""
    return read_metrics(paths.iteration(iteration) / "eval" / "metrics.json")


def committed_iterations(paths) -> list[int]:
    """Iteration numbers with a committed folder, ascending."""
    if not paths.iterations.is_dir():
        return []
    return sorted(int(p.name) for p in paths.iterations.iterdir() if p.is_dir() and p.name.isdigit())

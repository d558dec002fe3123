"""Schema-checked reading and writing of the run's JSON records."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.cli.output import UserError
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
    check_record(schema, obj, path)
    return obj


def write_record(schema: str, path: Path, obj: dict) -> None:
    check_record(schema, obj, path)
    write_json_atomic(path, obj)

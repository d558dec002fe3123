"""Schema-checked reading and writing of the run's JSON records."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.fileio import write_json_atomic
from harness.schemas import validate_instance


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def check_record(schema: str, obj: Any, where: Path | str) -> None:
    problems = validate_instance(schema, obj)
    if problems:
        raise UserError(f"{where}: does not match {schema}.schema.json: " + "; ".join(problems[:5]),
                        details=problems)


def read_record(schema: str, path: Path) -> dict:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: missing") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}:{exc.lineno}:{exc.colno}: malformed JSON: {exc.msg}") from None
    check_record(schema, obj, path)
    return obj


def write_record(schema: str, path: Path, obj: dict) -> None:
    check_record(schema, obj, path)
    write_json_atomic(path, obj)

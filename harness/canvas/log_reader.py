"""The one reader of episode logs (the writer is `harness.canvas.episode_log`): a log's
lines back as (header, firings) with every `{"$value": N}` / `{"$array": N}` reference
resolved. `harness.evaluation.trace` builds the views on top of it."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from harness.errors import UserError


def read_log(path: Path) -> tuple[dict, list[dict]]:
    """(episode header, firings) of an episode log, every value resolved."""
    if not path.is_file():
        raise UserError(f"{path}: no episode log (evaluate with an output folder to keep logs)")
    from harness.fileio import read_text

    return parse_lines(read_text(path, "episode log").splitlines(), str(path))


def parse_lines(lines: list[str], where: str) -> tuple[dict, list[dict]]:
    """(header, firings) from a log's lines, references resolved; `where` names the log in errors."""
    header: dict = {}
    firings, arrays, values = [], {}, {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}:{number}: malformed JSON line: {exc.msg}") from None
        except (ValueError, RecursionError) as exc:  # huge integers, absurd nesting
            raise UserError(f"{where}:{number}: unreadable JSON line ({type(exc).__name__})") from None
        if not isinstance(record, dict):
            raise UserError(f"{where}:{number}: a log line must be a JSON object")
        kind = record.get("kind")
        if kind == "episode":
            header = record
        elif kind == "firing":
            firings.append(record)
        elif kind == "array":
            if "from" in record:
                record = _apply_changes(record, arrays, f"{where}:{number}")
            arrays[record.get("id")] = {k: v for k, v in record.items() if k not in ("kind", "id")}
        elif kind == "value":
            values[record.get("id")] = record.get("value")
    if arrays or values:
        resolve = _Resolver(arrays, values, where)
        for f in firings:
            for field in ("inputs", "outputs", "self"):
                if isinstance(f.get(field), dict):
                    f[field] = resolve(f[field])
    return header, firings


def _apply_changes(record: dict, arrays: dict, where: str) -> dict:
    """An array line written as its changes from an earlier one (`from`, `at`, `bytes`), in full."""
    import numpy as np

    base = record["from"]
    before = arrays.get(base) if isinstance(base, int) else None
    if not isinstance(before, dict) or "base64" not in before:
        raise UserError(f"{where}: array {record.get('id')!r} changes array {base!r}, "
                        "which is not an earlier array line with its content")
    try:
        data = np.frombuffer(base64.b64decode(before["base64"], validate=True), np.uint8).copy()
        at = np.frombuffer(base64.b64decode(record["at"], validate=True), "<u4")
        data[at] = np.frombuffer(base64.b64decode(record["bytes"], validate=True), np.uint8)
    except (KeyError, TypeError, ValueError, IndexError) as exc:  # (binascii.Error is a ValueError)
        raise UserError(f"{where}: array {record.get('id')!r}: unreadable changes "
                        f"({type(exc).__name__}: {exc})") from None
    full = {k: v for k, v in record.items() if k not in ("from", "at", "bytes")}
    full["base64"] = base64.b64encode(data.tobytes()).decode("ascii")
    return full


class _Resolver:
    """Replaces references by their content; a value shared by many firings is resolved once."""

    def __init__(self, arrays: dict, values: dict, where: str):
        self.arrays, self.values, self.where = arrays, values, where
        self.done: dict[int, Any] = {}

    def __call__(self, v: Any) -> Any:
        if isinstance(v, dict):
            if len(v) == 1:
                if "$value" in v:
                    return self._value(v["$value"])
                if "$array" in v and not isinstance(v["$array"], dict):
                    if v["$array"] not in self.arrays:
                        raise UserError(f"{self.where}: array {v['$array']!r} is referenced but not in the log")
                    return {"$array": self.arrays[v["$array"]]}
            return {k: self(x) for k, x in v.items()}
        if isinstance(v, list):
            return [self(x) for x in v]
        return v

    def _value(self, vid: Any) -> Any:
        if vid not in self.done:
            if vid not in self.values:
                raise UserError(f"{self.where}: value {vid!r} is referenced but not in the log")
            self.done[vid] = None  # (a value cannot refer to itself: the writer never makes one that does)
            self.done[vid] = self(self.values[vid])
        return self.done[vid]


def array_of(value: dict):
    """A resolved `{"$array": record}` as a numpy array (None when its content was not logged)."""
    import numpy as np

    record = value["$array"]
    if "base64" in record:
        return np.frombuffer(base64.b64decode(record["base64"]), record["dtype"]).reshape(record["shape"])
    if "items" in record:
        return np.array(record["items"], dtype=object).reshape(record["shape"])
    return None

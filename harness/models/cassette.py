"""Record / replay of model calls in a JSONL cassette.

Each line (schema `cassette_entry`) holds a real request, its canonical hash
and the response it got. Replay serves responses by hash with no network; a
request the cassette does not hold is an error, never an invented answer.
When one hash was recorded more than once, the first response wins, so a
replayed evaluation is deterministic whatever order episodes run in.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from pathlib import Path

from filelock import FileLock

from harness.errors import UserError
from harness.fileio import parse_json
from harness.models.request import BackendResult, CassetteMiss, ModelRequest
from harness.schemas import validate_instance


class CassetteError(UserError):
    """A cassette file is unreadable or has a malformed line."""


class Cassette:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._entries: dict[str, dict] = {}
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        with self.path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                entry = parse_json(line, str(self.path), "cassette", CassetteError, first_line=lineno)
                problems = validate_instance("cassette_entry", entry)
                if problems:
                    raise CassetteError(f"{self.path}:{lineno}: bad cassette entry: {'; '.join(problems)}")
                self._entries.setdefault(entry["key"], entry)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def keys(self) -> list[str]:
        return list(self._entries)

    def entries(self) -> list[dict]:
        """The recorded entries, first one per request hash, in file order."""
        return list(self._entries.values())

    def lookup(self, request: ModelRequest) -> BackendResult:
        """The recorded answer to `request`; CassetteMiss naming the hash if there is none."""
        key = request.key()
        entry = self._entries.get(key)
        if entry is None:
            raise CassetteMiss(
                f"cassette {self.path} has no response for request {key[:16]}… "
                f"(model {request.model!r}, {len(self._entries)} recorded); request ends with: "
                f"{request.preview()!r}. Record it first (mode 'record') or check that the "
                "prompt, model and sampling parameters match the recording.",
                request_id=f"cassette:{key}", kind="cassette_miss")
        response = entry["response"]
        return BackendResult(text=response["text"], model=response["model"],
                             input_tokens=response["input_tokens"], output_tokens=response["output_tokens"],
                             request_id=response.get("request_id"),
                             cache_read_tokens=response.get("cache_read_tokens", 0),
                             cache_write_tokens=response.get("cache_write_tokens", 0))

    def record(self, request: ModelRequest, result: BackendResult, *, backend: str,
               latency_s: float, note: str | None = None) -> None:
        entry = {
            "key": request.key(),
            "request": request.to_dict(),
            "response": {"text": result.text, "model": result.model, "input_tokens": result.input_tokens,
                         "output_tokens": result.output_tokens, "cache_read_tokens": result.cache_read_tokens,
                         "cache_write_tokens": result.cache_write_tokens, "request_id": result.request_id,
                         "latency_s": round(latency_s, 4)},
            "backend": backend,
            "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        if note:
            entry["note"] = note
        line = json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n"
        with self._lock:
            if entry["key"] in self._entries:
                return
            self._entries[entry["key"]] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Worker processes may record into the same file.
            with FileLock(str(self.path) + ".lock", timeout=30):
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(line)

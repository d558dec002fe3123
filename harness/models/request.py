"""Backend-neutral model requests and responses, and the errors model calls raise.

Messages use one neutral shape that every backend translates:
`{"role": "user"|"assistant", "content": str | [part, ...]}` with parts
`{"type": "text", "text": str}` or `{"type": "image", "media_type": "image/png", "data": <base64>}`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

ROLES = ("user", "assistant")


class ModelCallError(RuntimeError):
    """A model call failed for good (after retries). Carries the request id for the episode log."""

    def __init__(self, message: str, *, request_id: str | None = None, kind: str = "error",
                 status: int | None = None, attempts: int = 0):
        super().__init__(f"{message} [request_id={request_id}]" if request_id else message)
        self.request_id = request_id
        self.kind = kind
        self.status = status
        self.attempts = attempts


class CassetteMiss(ModelCallError):
    """Replay asked for a request the cassette does not hold."""


@dataclass
class ModelResponse:
    text: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    request_id: str | None
    attempts: int = 1
    replayed: bool = False
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _normalise_content(content: Any, where: str) -> str | list[dict]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ValueError(f"{where}: content must be a string or a list of parts")
    parts = []
    for i, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            parts.append({"type": "text", "text": part["text"]})
        elif kind == "image" and isinstance(part.get("data"), str):
            parts.append({"type": "image", "media_type": part.get("media_type", "image/png"), "data": part["data"]})
        else:
            raise ValueError(f"{where}[{i}]: a part is {{'type': 'text', 'text'}} or {{'type': 'image', 'data'}}")
    return parts


def normalise_messages(messages: Any) -> list[dict]:
    """A plain string becomes one user message; everything is checked and copied."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list (or a string)")
    out = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise ValueError(f"messages[{i}]: needs role 'user' or 'assistant'")
        out.append({"role": message["role"],
                    "content": _normalise_content(message.get("content"), f"messages[{i}].content")})
    return out


@dataclass(frozen=True)
class ModelRequest:
    model: str
    messages: list
    system: str | None
    max_tokens: int
    temperature: float
    json_schema: dict | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "system": self.system, "messages": self.messages,
                "max_tokens": self.max_tokens, "temperature": float(self.temperature),
                "json_schema": self.json_schema}

    def key(self) -> str:
        """Canonical hash: what was asked, never who asked (no key, no URL)."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def preview(self, limit: int = 240) -> str:
        last = self.messages[-1]["content"] if self.messages else ""
        if isinstance(last, list):
            last = " ".join(p.get("text", "<image>") for p in last)
        text = " ".join(str(last).split())
        return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class BackendResult:
    """What a backend got back from one successful HTTP call."""
    text: str
    model: str
    input_tokens: int
    output_tokens: int
    request_id: str | None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

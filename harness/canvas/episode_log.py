"""Per-episode log: one record per node firing, written as JSONL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MAX_SUMMARY = 200
_MAX_ITEMS = 8


def _short(value: Any, depth: int) -> str:
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        return f"<{type(value).__name__} shape={tuple(shape)} dtype={value.dtype}>"
    if isinstance(value, str):
        return repr(value if len(value) <= 80 else value[:77] + "...")
    if isinstance(value, dict):
        if depth > 2:
            return "{...}"
        items = [f"{_short(k, depth + 1)}: {_short(v, depth + 1)}" for k, v in list(value.items())[:_MAX_ITEMS]]
        return "{" + ", ".join(items) + (", ..." if len(value) > _MAX_ITEMS else "") + "}"
    if isinstance(value, (list, tuple)):
        if depth > 2:
            return "[...]"
        items = [_short(v, depth + 1) for v in value[:_MAX_ITEMS]]
        more = f", ... ({len(value)} items)" if len(value) > _MAX_ITEMS else ""
        open_, close = ("[", "]") if isinstance(value, list) else ("(", ")")
        return open_ + ", ".join(items) + more + close
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def summarize(value: Any) -> str:
    """A short, bounded repr (arrays by shape and dtype, containers truncated)."""
    try:
        text = _short(value, 0)
    except Exception as exc:  # a broken __repr__ must not end the episode
        text = f"<unrepresentable {type(value).__name__}: {exc}>"
    return text if len(text) <= MAX_SUMMARY else text[: MAX_SUMMARY - 3] + "..."


def summarize_ports(ports: dict | None) -> dict[str, str] | None:
    if ports is None:
        return None
    return {k: summarize(v) for k, v in ports.items()}


class EpisodeLog:
    """Collects firing records for one or more episodes.

    `EpisodeLog(enabled=False)` records nothing (used to measure the runtime
    alone). Records: node, type, tick, inputs, outputs, duration_s, error,
    model, input_tokens, output_tokens, cost_usd, self (what the node passed
    to ctx.log). `episode` and `result` are set by the runner.
    """

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.records: list[dict[str, Any]] = []
        self.episode: dict | None = None
        self.result: dict | None = None

    def firing(self, node: str, node_type: str, tick: int, inputs: dict | None, outputs: dict | None,
               duration_s: float, error: str | None = None, usage: dict | None = None,
               self_fields: dict | None = None) -> None:
        if not self.enabled:
            return
        record: dict[str, Any] = {
            "node": node, "type": node_type, "tick": tick,
            "inputs": summarize_ports(inputs), "outputs": summarize_ports(outputs),
            "duration_s": round(duration_s, 7), "error": error,
        }
        if usage:
            record.update(model=usage.get("model"), input_tokens=usage.get("input_tokens", 0),
                          output_tokens=usage.get("output_tokens", 0), cost_usd=usage.get("cost_usd", 0.0))
        if self_fields:
            record["self"] = self_fields
        self.records.append(record)

    def to_lines(self) -> list[str]:
        lines = []
        if self.episode is not None or self.result is not None:
            lines.append(json.dumps({"kind": "episode", "episode": self.episode, "result": self.result},
                                    default=summarize))
        lines.extend(json.dumps({"kind": "firing", **r}, default=summarize) for r in self.records)
        return lines

    def write_jsonl(self, path: str | Path) -> Path:
        """Write the episode header line then one line per firing; returns the path."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text("".join(line + "\n" for line in self.to_lines()), encoding="utf-8")
        tmp.replace(p)
        return p

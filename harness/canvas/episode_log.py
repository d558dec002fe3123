"""Per-episode log: one record per node firing, written as JSONL.

Summarising runs on every firing's inputs and outputs, so it is kept cheap
without changing what is written (each summary is the same text the plain
recursive rule gives):

- exact scalar and short-string types take a fast path, and so do small flat
  lists/tuples/dicts of them (their builtin repr is the summary);
- container summaries stop as soon as the text is known to exceed the
  `MAX_SUMMARY` cut (only its first `MAX_SUMMARY - 3` characters are kept);
- array summaries are cached by (type, shape, dtype);
- within one tick, a value seen again (the simulator's observation is
  summarised as its output and again as each consumer's input) reuses its
  summary, looked up by identity. Values on ports are not mutated by
  convention, but a node may mutate its own state between firings, so the
  memo is cleared whenever the tick changes or a node fires a second time in
  the same tick (the simulator executing an action chunk).
"""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path
from typing import Any

MAX_SUMMARY = 200
_MAX_ITEMS = 8
_MAX_REPR = 80
_BIG = 10 ** 70  # ints strictly between -_BIG and _BIG have a repr of at most _MAX_REPR characters

_SCALARS = frozenset((int, float, bool, type(None)))
_array_text: dict = {}  # (type, shape, dtype) -> summary; bounded below


def _simple(v: Any) -> bool:
    """True when repr(v) is v's summary and it is short."""
    c = type(v)
    if c is str:
        return len(v) <= _MAX_REPR
    if c is int:
        return -_BIG < v < _BIG
    return c is bool or c is float or v is None


def _array(value: Any, shape: Any) -> str:
    try:
        key = (type(value), shape, value.dtype)
        text = _array_text.get(key)
    except TypeError:  # unhashable shape or dtype
        key, text = None, None
    if text is None:
        text = f"<{type(value).__name__} shape={tuple(shape)} dtype={value.dtype}>"
        if key is not None and len(_array_text) < 4096:
            _array_text[key] = text
    return text


def _short(value: Any, depth: int, budget: int) -> str:
    """The summary of `value`, or a prefix of it longer than `budget` characters
    (the caller then knows its own text will be cut, and stops)."""
    cls = type(value)
    if cls is str:
        return repr(value if len(value) <= _MAX_REPR else value[:_MAX_REPR - 3] + "...")
    if cls in _SCALARS:
        text = repr(value)
        return text if len(text) <= _MAX_REPR else text[:_MAX_REPR - 3] + "..."
    if cls is not dict and cls is not list and cls is not tuple:
        shape = getattr(value, "shape", None)
        if shape is not None and hasattr(value, "dtype"):
            return _array(value, shape)
        if isinstance(value, str):
            return repr(value if len(value) <= _MAX_REPR else value[:_MAX_REPR - 3] + "...")
    if isinstance(value, dict):
        if depth > 2:
            return "{...}"
        if cls is dict and len(value) <= _MAX_ITEMS:
            for k, v in value.items():
                if not (_simple(k) and _simple(v)):
                    break
            else:
                return repr(value)
        parts = ["{"]
        used = 1
        first = True
        for k, v in islice(value.items(), _MAX_ITEMS):
            if not first:
                parts.append(", ")
                used += 2
            first = False
            ks = repr(k) if type(k) is str and len(k) <= _MAX_REPR else _short(k, depth + 1, budget - used)
            parts.append(ks)
            used += len(ks)
            if used > budget:
                return "".join(parts)
            parts.append(": ")
            used += 2
            vs = repr(v) if _simple(v) else _short(v, depth + 1, budget - used)
            parts.append(vs)
            used += len(vs)
            if used > budget:
                return "".join(parts)
        parts.append(", ...}" if len(value) > _MAX_ITEMS else "}")
        return "".join(parts)
    if isinstance(value, (list, tuple)):
        if depth > 2:
            return "[...]"
        if (cls is list or (cls is tuple and len(value) != 1)) and len(value) <= _MAX_ITEMS:
            for v in value:
                if not _simple(v):
                    break
            else:
                return repr(value)
        open_, close = ("[", "]") if isinstance(value, list) else ("(", ")")
        parts = [open_]
        used = 1
        first = True
        for v in value[:_MAX_ITEMS]:
            if not first:
                parts.append(", ")
                used += 2
            first = False
            vs = repr(v) if _simple(v) else _short(v, depth + 1, budget - used)
            parts.append(vs)
            used += len(vs)
            if used > budget:
                return "".join(parts)
        if len(value) > _MAX_ITEMS:
            parts.append(f", ... ({len(value)} items)")
        parts.append(close)
        return "".join(parts)
    text = repr(value)
    return text if len(text) <= _MAX_REPR else text[:_MAX_REPR - 3] + "..."


def summarize(value: Any) -> str:
    """A short, bounded repr (arrays by shape and dtype, containers truncated)."""
    try:
        text = _short(value, 0, MAX_SUMMARY)
    except Exception as exc:  # a broken __repr__ must not end the episode
        text = f"<unrepresentable {type(value).__name__}: {exc}>"
    return text if len(text) <= MAX_SUMMARY else text[: MAX_SUMMARY - 3] + "..."


def summarize_ports(ports: dict | None, memo: dict | None = None) -> dict[str, str] | None:
    """Summaries of a node's ports. `memo` (id -> (value, summary)) reuses the
    summary of a value already seen; it holds the value so the id stays unique."""
    if ports is None:
        return None
    out = {}
    for k, v in ports.items():
        if memo is None or _simple(v):
            out[k] = summarize(v)
        else:
            hit = memo.get(id(v))
            if hit is not None and hit[0] is v:
                out[k] = hit[1]
            else:
                text = out[k] = summarize(v)
                memo[id(v)] = (v, text)
    return out


class _Encoder:
    """`json.dumps(obj, default=summarize)` with the encoder built once."""

    def __init__(self):
        self._py = json.JSONEncoder(default=summarize)
        self._c = None
        self._markers: dict = {}
        make = getattr(json.encoder, "c_make_encoder", None)
        if make is not None:
            self._c = make(self._markers, summarize, json.encoder.encode_basestring_ascii, None,
                           ": ", ", ", False, False, True)

    def encode(self, obj: Any) -> str:
        if self._c is None or type(obj) is not dict:
            return self._py.encode(obj)
        try:
            return "".join(self._c(obj, 0))
        except BaseException:
            self._markers.clear()  # an aborted pass can leave entries behind
            raise


_encoder = _Encoder()


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
        self._memo: dict[int, tuple[Any, str]] = {}  # summaries of this tick's values, by id
        self._memo_tick: int | None = None
        self._memo_nodes: set[str] = set()  # nodes that fired since the memo was cleared

    def firing(self, node: str, node_type: str, tick: int, inputs: dict | None, outputs: dict | None,
               duration_s: float, error: str | None = None, usage: dict | None = None,
               self_fields: dict | None = None) -> None:
        if not self.enabled:
            return
        memo = self._memo
        fired = self._memo_nodes
        if tick != self._memo_tick or node in fired:
            memo.clear()
            fired.clear()
            self._memo_tick = tick
        fired.add(node)
        record: dict[str, Any] = {
            "node": node, "type": node_type, "tick": tick,
            "inputs": summarize_ports(inputs, memo), "outputs": summarize_ports(outputs, memo),
            "duration_s": round(duration_s, 7), "error": error,
        }
        if usage:
            record.update(model=usage.get("model"), input_tokens=usage.get("input_tokens", 0),
                          output_tokens=usage.get("output_tokens", 0), cost_usd=usage.get("cost_usd", 0.0))
        if self_fields:
            record["self"] = self_fields
        self.records.append(record)

    def to_lines(self) -> list[str]:
        self._memo.clear()  # release the values the memo holds
        self._memo_tick = None
        encode = _encoder.encode
        lines = []
        if self.episode is not None or self.result is not None:
            lines.append(encode({"kind": "episode", "episode": self.episode, "result": self.result}))
        # a record always has keys, so its text is "{...}": prepend the kind
        lines.extend('{"kind": "firing", ' + encode(r)[1:] for r in self.records)
        return lines

    def write_jsonl(self, path: str | Path) -> Path:
        """Write the episode header line then one line per firing; returns the path."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text("".join(line + "\n" for line in self.to_lines()), encoding="utf-8")
        tmp.replace(p)
        return p

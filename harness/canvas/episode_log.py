"""Per-episode log: one record per node firing, written as JSONL.

Summarising runs on every firing's inputs and outputs, so it is kept cheap
without changing what is written (each summary is the same text the plain
recursive rule gives):

- exact scalar and short-string types take a fast path, and so do small flat
  lists/tuples/dicts of them (their builtin repr is the summary);
- container summaries stop as soon as the text is known to exceed the
  `MAX_SUMMARY` cut (only its first `MAX_SUMMARY - 3` characters are kept);
- array summaries are cached by (type, shape, dtype);
- a value seen again reuses its summary, looked up by identity: the
  simulator's observation is summarised as its output and again as each
  consumer's input. Values on ports are not mutated by convention, but a node
  may mutate its own state (a map it outputs every tick) when it fires. So
  only inputs are looked up (a firing's outputs are always summarised afresh,
  and replace the memo's entry), and the memo is cleared whenever a node fires
  a second time since the last clear (the next tick's agents, the simulator
  executing the next action of a chunk): between two clears no node fires
  twice, so no value can have been changed by its owner after it was
  summarised and before it is read as an input. The window of that rule
  opens when the memo gets its first entry (while it is empty nothing can be
  stale), so firings of plain values cost no bookkeeping. (The runtime also calls
  `forget` at an episode's start and at each firing of a node that may write
  state cells: a cell's live value may be on a port.)
"""

from __future__ import annotations

import base64
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


_FLAT = frozenset((bool, float, type(None)))  # repr always short
_STR, _INT = frozenset((str,)), frozenset((int,))
_SIMPLE_TYPES = _FLAT | _STR | _INT
_REPRABLE_TYPES = _SIMPLE_TYPES | {list, tuple, dict}


def _reprable(items: Any, depth: int) -> bool:
    """True when the builtin repr of each of `items` (the elements, keys or
    values of a container at `depth`) is exactly its summary: short scalars and
    strings, and small flat lists, tuples and dicts of them while within the
    depth limit. The usual homogeneous cases are checked at C speed."""
    types = set(map(type, items))
    if types <= _FLAT:
        return True
    if types == _STR:
        return max(map(len, items)) <= _MAX_REPR
    if types == _INT:
        return -_BIG < min(items) and max(items) < _BIG
    if types <= _SIMPLE_TYPES:
        return all(map(_simple, items))
    if depth >= 2 or not types <= _REPRABLE_TYPES:
        return False
    for v in items:
        c = type(v)
        if c is list or c is tuple:
            if len(v) > _MAX_ITEMS or (c is tuple and len(v) == 1) or not _reprable(v, depth + 1):
                return False
        elif c is dict:
            if len(v) > _MAX_ITEMS or not _reprable(v, depth + 1) or not _reprable(v.values(), depth + 1):
                return False
        elif not _simple(v):
            return False
    return True


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
    if cls is dict:
        return "{...}" if depth > 2 else _dict_text(value, depth, budget)
    if cls is list or cls is tuple:
        return "[...]" if depth > 2 else _seq_text(value, cls is list, depth, budget)
    if cls is str:
        return repr(value if len(value) <= _MAX_REPR else value[:_MAX_REPR - 3] + "...")
    if cls in _SCALARS:
        text = repr(value)
        return text if len(text) <= _MAX_REPR else text[:_MAX_REPR - 3] + "..."
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        return _array(value, shape)
    if isinstance(value, str):
        return repr(value if len(value) <= _MAX_REPR else value[:_MAX_REPR - 3] + "...")
    if isinstance(value, dict):
        return "{...}" if depth > 2 else _dict_text(value, depth, budget)
    if isinstance(value, (list, tuple)):
        return "[...]" if depth > 2 else _seq_text(value, isinstance(value, list), depth, budget)
    text = repr(value)
    return text if len(text) <= _MAX_REPR else text[:_MAX_REPR - 3] + "..."


def _item_text(v: Any, depth: int, budget: int) -> str:
    c = type(v)
    if c is str:
        return repr(v if len(v) <= _MAX_REPR else v[:_MAX_REPR - 3] + "...")
    if c is bool or c is float or v is None or (c is int and -_BIG < v < _BIG):
        return repr(v)
    return _short(v, depth, budget)


def _dict_text(value: dict, depth: int, budget: int) -> str:
    n = len(value)
    if n <= _MAX_ITEMS:
        if type(value) is dict and _reprable(value, depth) and _reprable(value.values(), depth):
            return repr(value)
        items = value.items()
    else:
        items = islice(value.items(), _MAX_ITEMS)
    parts: list[str] = []
    used = -1  # len("{" + ", ".join(parts))
    for k, v in items:
        ks = _item_text(k, depth + 1, budget - used - 2)
        at = used + 2 + len(ks)
        if at > budget:
            parts.append(ks)
            return "{" + ", ".join(parts)
        item = ks + ": " + _item_text(v, depth + 1, budget - at - 2)
        parts.append(item)
        used += 2 + len(item)
        if used > budget:
            return "{" + ", ".join(parts)
    return "{" + ", ".join(parts) + (", ...}" if n > _MAX_ITEMS else "}")


def _seq_text(value: list | tuple, is_list: bool, depth: int, budget: int) -> str:
    n = len(value)
    if n <= _MAX_ITEMS and (is_list or n != 1) and type(value) in (list, tuple) and _reprable(value, depth):
        return repr(value)  # (a 1-tuple's repr has a trailing comma the summary has not)
    open_ = "[" if is_list else "("
    parts: list[str] = []
    used = -1  # len(open_ + ", ".join(parts))
    for v in value[:_MAX_ITEMS]:
        text = _item_text(v, depth + 1, budget - used - 2)
        parts.append(text)
        used += 2 + len(text)
        if used > budget:
            return open_ + ", ".join(parts)
    return open_ + ", ".join(parts) + (f", ... ({n} items)" if n > _MAX_ITEMS else "") + ("]" if is_list else ")")


def summarize(value: Any) -> str:
    """A short, bounded repr (arrays by shape and dtype, containers truncated)."""
    try:
        text = _short(value, 0, MAX_SUMMARY)
    except Exception as exc:  # a broken __repr__ must not end the episode
        text = f"<unrepresentable {type(value).__name__}: {exc}>"
    return text if len(text) <= MAX_SUMMARY else text[: MAX_SUMMARY - 3] + "..."


def summarize_ports(ports: dict | None, memo: dict | None = None, fresh: bool = False,
                    arrays: dict | None = None, where: str = "") -> dict[str, str] | None:
    """Summaries of a node's ports. `memo` (id -> (value, summary)) reuses the
    summary of a value already seen (it holds the value, so the id stays
    unique); with `fresh` every value is summarised and the memo updated.
    `arrays`: where to put the full content of each array a summarised value
    holds (`array_entries`), keyed `<where>/<port><pointer>`."""
    if ports is None:
        return None
    out = {}
    try:
        for k, v in ports.items():
            c = type(v)
            if c is str and len(v) <= _MAX_REPR:
                out[k] = repr(v)
            elif c is bool or c is float or v is None or (c is int and -_BIG < v < _BIG):
                out[k] = repr(v)
            elif memo is None:
                out[k] = text = summarize(v)
                if arrays is not None and _ARRAY_MARK in text:
                    array_entries(v, f"{where}/{_escape(k)}", arrays)
            else:
                hit = None if fresh else memo.get(id(v))
                if hit is not None and hit[0] is v:
                    out[k] = hit[1]  # its arrays went with the record that summarised it
                else:
                    text = _short(v, 0, MAX_SUMMARY)
                    if len(text) > MAX_SUMMARY:
                        text = text[:MAX_SUMMARY - 3] + "..."
                    out[k] = text
                    memo[id(v)] = (v, text)
                    if arrays is not None and _ARRAY_MARK in text:
                        array_entries(v, f"{where}/{_escape(k)}", arrays)
    except Exception:  # a broken __repr__: summarize() words it
        return {k: summarize(v) for k, v in ports.items()}
    return out


# -- arrays in full -----------------------------------------------------------------

MAX_ARRAY_BYTES = 1 << 20  # an array larger than this is logged by shape, dtype and statistics only
_ARRAY_MARK = " shape="  # in a summary exactly when an array was summarised into it
_ARRAY_DEPTH = 6


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def array_entries(value: Any, where: str, out: dict) -> None:
    """Add `where<pointer> -> array_record(a)` to `out` for each array `a`
    inside `value` (dicts, lists and tuples are searched; `pointer` is the RFC
    6901 path from the port's value to the array)."""
    if getattr(value, "shape", None) is not None and hasattr(value, "dtype"):
        out[where] = array_record(value)
        return
    stack = [(value, where, 0)]
    while stack:
        v, at, depth = stack.pop()
        if depth >= _ARRAY_DEPTH:
            continue
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, (list, tuple)) else ()
        for k, x in items:
            if isinstance(x, (dict, list, tuple)):
                stack.append((x, f"{at}/{_escape(k)}", depth + 1))
            elif getattr(x, "shape", None) is not None and hasattr(x, "dtype"):
                out[f"{at}/{_escape(k)}"] = array_record(x)


def array_record(a: Any) -> dict[str, Any]:
    """An array's complete content in JSON: `dtype` (numpy's `dtype.str`, byte
    order included), `shape`, and `base64` of its bytes in C order — or
    `items` (nested lists) for object arrays. Read back with
    `numpy.frombuffer(base64.b64decode(r["base64"]), r["dtype"]).reshape(r["shape"])`.
    Over MAX_ARRAY_BYTES only min/max/mean are kept (`"omitted": true`)."""
    try:
        import numpy as np  # only reached when an array is being logged

        a = np.asarray(a)
        record: dict[str, Any] = {"dtype": a.dtype.str, "shape": list(a.shape)}
        if a.dtype.hasobject:
            record["items"] = a.tolist()
        elif a.nbytes > MAX_ARRAY_BYTES:
            record["omitted"] = True
            if a.size and a.dtype.kind in "biuf":
                record.update(min=a.min().item(), max=a.max().item(), mean=float(a.mean()))
        else:
            record["base64"] = base64.b64encode(np.ascontiguousarray(a).tobytes()).decode("ascii")
        return record
    except Exception as exc:  # an array-like numpy cannot read
        return {"dtype": str(getattr(a, "dtype", "?")), "shape": list(getattr(a, "shape", ())),
                "error": f"{type(exc).__name__}: {exc}"}


# -- the log -----------------------------------------------------------------------

class EpisodeLog:
    """Collects firing records for one or more episodes.

    `EpisodeLog(enabled=False)` records nothing (used to measure the runtime
    alone). Records: node, type, tick, inputs, outputs, duration_s, error,
    model, input_tokens, output_tokens, cost_usd, self (what the node passed
    to ctx.log), arrays (the full content of arrays on the ports, see
    `array_record`; an input carrying the same object another record of the
    same tick already summarised refers to that record's entry). `episode`
    and `result` are set by the runner.

    Ports are summarised when the node fires (values may change later); the
    record dicts are built when `records` is read (until then a firing is a
    few entries of a flat list, which the cycle collector need not track).
    """

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self._records: list[dict[str, Any]] = []
        # firings not yet turned into records, _FIELDS values each, flat: a list
        # of plain values gives the cycle collector no new containers to track
        self._pending: list = []
        self.episode: dict | None = None
        self.result: dict | None = None
        self._memo: dict[int, tuple[Any, str]] = {}  # summaries of recent port values, by id
        self._memo_nodes: set[str] = set()  # nodes that fired since the memo was cleared

    @property
    def records(self) -> list[dict[str, Any]]:
        pending = self._pending
        if pending:
            self._records.extend(map(_record, *(pending[i::_FIELDS] for i in range(_FIELDS))))
            pending.clear()
        return self._records

    def forget(self) -> None:
        """Drop the memo of summaries: call when values may have changed other than
        by their producing node's firing (nodes reset for a new episode, a node
        writing state cells, whose live values other ports may carry)."""
        self._memo.clear()
        self._memo_nodes.clear()

    def firing(self, node: str, node_type: str, tick: int, inputs: dict | None, outputs: dict | None,
               duration_s: float, error: str | None = None, usage: dict | None = None,
               self_fields: dict | None = None) -> None:
        if not self.enabled:
            return
        if usage:  # read now: the dict may be reused
            usage = (usage.get("model"), usage.get("input_tokens", 0), usage.get("output_tokens", 0),
                     usage.get("cost_usd", 0.0))
        memo = self._memo
        if memo:  # (while the memo is empty, no window is open: see the module doc)
            fired = self._memo_nodes
            if node in fired:
                memo.clear()
                fired.clear()
            fired.add(node)
            opened = False
        else:
            opened = True
        arrays: dict = {}
        self._pending.extend((node, node_type, tick, summarize_ports(inputs, memo, False, arrays, "inputs"),
                              summarize_ports(outputs, memo, True, arrays, "outputs"),
                              duration_s, error, usage, self_fields, arrays))
        if opened and memo:  # the window opens with this firing
            self._memo_nodes.clear()
            self._memo_nodes.add(node)

    def to_lines(self) -> list[str]:
        self.forget()  # release the values the memo holds
        encode = json.JSONEncoder(default=summarize).encode
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
        lines = self.to_lines()
        tmp.write_text("\n".join(lines) + "\n" if lines else "", encoding="utf-8")
        tmp.replace(p)
        return p


_FIELDS = 10  # values per pending firing, in _record's order


def _record(node, node_type, tick, inputs, outputs, duration_s, error, usage, self_fields, arrays) -> dict[str, Any]:
    record: dict[str, Any] = {"node": node, "type": node_type, "tick": tick, "inputs": inputs, "outputs": outputs,
                              "duration_s": round(duration_s, 7), "error": error}
    if usage:
        record.update(zip(("model", "input_tokens", "output_tokens", "cost_usd"), usage))
    if self_fields:
        record["self"] = self_fields
    if arrays:
        record["arrays"] = arrays
    return record

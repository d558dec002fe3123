"""Per-episode log: one record per node firing, every port value in full, as JSONL.

A firing's ports are kept as their JSON text and its line as bytes; the shared
lines wait for `write_jsonl`/`records`. `firing` encodes the ports at once (a
snapshot: values may change afterwards). `defer` keeps the firing's arguments
and leaves the encoding to the next `flush` (or `forget`, `records`,
`write_jsonl`), so that a tick's firings are encoded together rather than each
between two simulator steps; its caller keeps the values unchanged until then.
The runtime defers every firing and flushes at each tick's start (before any
agent node fires again), before a node that may write state cells fires,
before a node fires whose last outputs an earlier node of the tick read over a
delayed edge, before each step of a simulator whose returned values may change
(`SimulatorNode.fresh_outputs`), and at the episode's end: every value is
encoded as it was when its node fired. Encoding:

- a firing's inputs, or its outputs, whose JSON text is at most `INLINE_CHARS`
  bytes are one orjson encoding, written as they are;
- in a larger one, each value is encoded on its own: scalars and short strings
  are quoted directly (no encoder call), and a value whose JSON text is longer
  than `SHARED_CHARS` bytes is stored once per episode in a `value` line and
  referenced as `{"$value": N}` (a prompt, a caption list, an observation
  repeated tick after tick); after a node's inputs, or outputs, were too long
  for one text, its next ones are encoded value by value without trying one
  text first, until such a text, no value of it shared, is short again;
- arrays are stored once per distinct content in an `array` line and referenced
  as `{"$array": N}`; their bytes are kept and base64-encoded when written. An
  array of at least `CHANGES_MIN_BYTES` bytes whose bytes differ in few places
  from the previous array line of its dtype and shape is written as those
  changes (`from`, `at`, `bytes`: a map updated tick by tick);
- a value read again as a consumer's input reuses the encoding made when it was
  an output, looked up by identity (a port's value, or an array anywhere in
  the inputs). Values on ports are not mutated by
  convention, but a node may mutate its own state (a map it outputs every tick)
  when it fires. So only inputs are looked up (a firing's outputs are always
  encoded afresh and replace the memo's entry), and the memo is cleared
  whenever a node fires a second time since the last clear: between two clears
  no node fires twice, so no value can have changed after it was encoded and
  before it is read as an input. The window opens when the memo gets its first
  entry. (The runtime also calls `forget` at an episode's start and before each
  firing of a node that may write state cells: a cell's live value may be on a
  port.)

orjson writes what the standard library's C encoder writes, up to spelling
(floats' shortest form, text as UTF-8 rather than `\\u` escapes). What it would
write differently is encoded by the standard library instead: a text holding
`null` (orjson writes NaN and infinities as null; they must become `$float`), one
holding a character `str.splitlines` breaks lines at (the reader splits on
them), and whatever orjson refuses (keys that are not strings, integers beyond
64 bits, nesting past 255 levels).

Values that are not JSON data are written as tagged objects (see
`schemas/episode_log_line.schema.json`): `$array`, `$object` (an object's
`log_value()` if it has one, else its dataclass fields, else its repr without
memory addresses), `$float` (non-finite), `$set`, `$bytes`, `$dict` (keys
that are not strings or numbers). Dict keys that are numbers are written as
JSON strings; an `Enum` member (neither a str nor an int) as its value.
`harness.canvas.log_reader.read_log` reads the lines back with every reference
resolved; `EpisodeLog.records` gives the same.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import orjson

FORMAT = 2
INLINE_CHARS = 512  # a firing's inputs or outputs up to this JSON size are written as one text
SHARED_CHARS = 160  # in larger ones, longer values' JSON texts are stored once per episode and referenced
MAX_ARRAY_BYTES = 1 << 20  # a larger array is logged by shape, dtype and statistics only
CHANGES_MIN_BYTES = 4096  # an array this large may be written as its changes from the previous one of its kind
_MAX_DEPTH = 64
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+|0x[0-9a-fA-F]{8,}")
_SCALAR = {None: b"null", True: b"true", False: b"false"}
_ORJSON = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME  # both: tagged objects, as json does
_LINE_BREAKS = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")  # U+0085, U+2028, U+2029 in UTF-8
_ascii = getattr(json.encoder, "c_encode_basestring_ascii", None) or json.encoder.py_encode_basestring_ascii


def _quote(text: str) -> bytes:
    return _ascii(text).encode("ascii")


def _encoder(default):
    """A compact JSON encoder refusing NaN and Infinity: json's C encoder where it has one."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(allow_nan=False, check_circular=False, separators=(",", ":"), default=default).encode
    encode = make(None, default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, False)
    return lambda value: "".join(encode(value, 0))


def tagged_object(value: Any, encode_as_data) -> dict:
    """A value that is not JSON data, as a tagged JSON object (what it is, never where it is)."""
    cls = type(value)
    name = cls.__qualname__
    own = getattr(value, "log_value", None)
    if callable(own):
        return {"$object": name, "value": encode_as_data(own())}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"$object": name, "value": encode_as_data({f.name: getattr(value, f.name)
                                                          for f in dataclasses.fields(value)})}
    if isinstance(value, (set, frozenset)):
        items = list(value)
        try:
            items.sort()
        except TypeError:
            items.sort(key=repr)
        return {"$set": encode_as_data(items)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ must not end the episode
        text = f"<unrepresentable: {type(exc).__name__}>"
    return {"$object": name, "repr": _ADDRESS.sub("", text)}


class EpisodeLog:
    """Collects firing records for one or more episodes.

    `EpisodeLog(enabled=False)` records nothing (used to measure the runtime
    alone). Records: node, type, tick, inputs, outputs (port -> value),
    duration_s, error, model, input_tokens, output_tokens, cost_usd, self (what
    the node passed to ctx.log). `episode`, `result` and `ports` (node -> its
    type and output port types) are set by the runner.
    """

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.episode: dict | None = None
        self.result: dict | None = None
        self.ports: dict | None = None
        self._firings: list[bytes] = []  # each firing's line, in firing order
        self._pending: list[tuple] = []  # deferred firings' arguments, not yet encoded
        self._starts: dict[tuple, bytes] = {}  # (node, type) -> a firing line's text up to its tick
        self._values: dict[bytes, int] = {}  # JSON text -> value id
        self._arrays: dict[tuple, int] = {}  # (dtype, shape, bytes) -> array id
        self._array_lines: list = []  # per array id: (dtype, shape, bytes) or a finished record
        self._plain_dtypes: dict[int, tuple] = {}  # id(dtype) -> (dtype, dtype.str) for dtypes seen without objects
        self._memo: dict[int, tuple[Any, bytes]] = {}  # encodings of recent port values, by id
        self._memo_nodes: set[str] = set()  # nodes that fired since the memo was cleared
        self._texts: dict[int, tuple[str, bytes]] = {}  # long texts' encodings, by id
        self._keys: dict[str, bytes] = {}  # port name -> ",", its JSON text and ":"
        self._long_ports: tuple[set[str], set[str]] = (set(), set())  # nodes whose last inputs, outputs were too long
        numpy = sys.modules.get("numpy")  # (not imported here: a log of plain values needs none)
        self._ndarray = numpy.ndarray if numpy is not None else None
        self._resolved: list[dict] | None = None

    # -- the firing path -----------------------------------------------------------
    def forget(self) -> None:
        """Encode the deferred firings, then drop the memo of encodings: call before values
        may change other than by their producing node's next firing (nodes reset for a new
        episode, a node writing state cells, whose live values other ports may carry)."""
        self.flush()
        self._memo.clear()
        self._memo_nodes.clear()

    def firing(self, node: str, node_type: str, tick: int, inputs: dict | None, outputs: dict | None,
               duration_s: float, error: str | None = None, usage: dict | None = None,
               self_fields: dict | None = None) -> None:
        """Record a firing, its ports encoded now (after the deferred ones)."""
        if not self.enabled:
            return
        if self._pending:
            self.flush()
        self._encode(node, node_type, tick, inputs, outputs, duration_s, error, usage, self_fields)

    def defer(self, *firing) -> None:
        """Record a firing (`firing`'s arguments) to be encoded at the next `flush`: its values
        must not change until then."""
        self._pending.append(firing)

    def flush(self) -> None:
        """Encode the deferred firings, in the order they fired."""
        pending = self._pending
        if pending:
            self._pending = []
            if self.enabled:
                encode = self._encode
                for firing in pending:
                    encode(*firing)

    def _encode(self, node: str, node_type: str, tick: int, inputs: dict | None, outputs: dict | None,
                duration_s: float, error: str | None = None, usage: dict | None = None,
                self_fields: dict | None = None) -> None:
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
        start = self._starts.get((node, node_type))
        if start is None:
            start = self._starts[node, node_type] = _FIRING_START % (_quote(node), _quote(node_type))
        inputs, outputs = self._ports(inputs, False, node), self._ports(outputs, True, node)
        extra = b""
        if usage:
            extra = b"," + self._json({"model": usage.get("model"), "input_tokens": usage.get("input_tokens", 0),
                                       "output_tokens": usage.get("output_tokens", 0),
                                       "cost_usd": usage.get("cost_usd", 0.0)})[1:-1]
        if self_fields:
            extra += b',"self":' + self._ports(self_fields, True)
        if not 0.0 < duration_s < math.inf:  # (a monotonic clock gives none below 0; JSON holds no NaN or infinity)
            duration_s = 0.0
        self._firings.append(_FIRING_LINE % (start, tick, inputs, outputs, duration_s,
                                             b"null" if error is None else _quote(error), extra))
        self._resolved = None
        if opened and memo:  # the window opens with this firing
            self._memo_nodes.clear()
            self._memo_nodes.add(node)

    def _ports(self, ports: dict | None, fresh: bool, node: str | None = None) -> bytes:
        """The JSON text of a node's inputs, or (`fresh`) outputs: the snapshot of their values
        now. When that node's last such text was too long for one, each value is encoded on its
        own without trying the whole first, until a text of values none of them shared is short
        enough again."""
        if ports is None:
            return b"null"
        long_nodes = self._long_ports[fresh]
        if node in long_nodes:
            text = self._each_port(ports, fresh)
            if len(text) <= INLINE_CHARS and text.find(b'{"$value":') < 0:
                long_nodes.discard(node)
            return text
        whole = ports
        if not fresh and self._memo:  # values encoded in the memo's window are not encoded again
            memo = self._memo
            for k, v in ports.items():
                hit = memo.get(id(v))
                if hit is not None and hit[0] is v:
                    if whole is ports:
                        whole = dict(ports)
                    whole[k] = orjson.Fragment(hit[1])
        try:
            text = orjson.dumps(whole, self._default_output if fresh else self._default_input, _ORJSON)
        except TypeError:  # keys that are not strings, integers beyond 64 bits, nesting past 255 levels
            pass
        else:
            # (_json's test, written out: a call per firing costs more than the test)
            if len(text) <= INLINE_CHARS and text.find(b"null") < 0 and (
                    text.isascii() or not any(text.find(b) >= 0 for b in _LINE_BREAKS)):
                return text  # (not kept: the firing's line is a new text)
        if node is not None:
            long_nodes.add(node)
        return self._each_port(ports, fresh)

    def _each_port(self, ports: dict, fresh: bool) -> bytes:
        """`_ports`' text with each value encoded on its own (long ones shared)."""
        keys, memo, texts, parts = self._keys, self._memo, self._texts, [b"{"]
        for k, v in ports.items():
            key = keys.get(k)
            if key is None:
                key = keys[k] = b',%b:' % _quote(str(k))
            c = type(v)
            if c is str:
                if len(v) <= SHARED_CHARS:
                    parts += (key, _quote(v))
                    continue
                hit = texts.get(id(v))  # (immutable: encoded once per log, however often it comes)
                if hit is None or hit[0] is not v:
                    hit = texts[id(v)] = (v, self._fragment(v))
            elif c is int:
                parts += (key, b"%d" % v)
                continue
            elif c is float and v - v == 0:
                parts += (key, repr(v).encode())
                continue
            elif v is None or c is bool:
                parts += (key, _SCALAR[v])
                continue
            else:
                hit = None if fresh else memo.get(id(v))
                if hit is None or hit[0] is not v:
                    hit = memo[id(v)] = (v, self._fragment(v))
            parts += (key, hit[1])
        if len(parts) == 1:
            return b"{}"
        parts[1] = parts[1][1:]  # (the first key's separator)
        parts.append(b"}")
        return b"".join(parts)

    def _fragment(self, v: Any) -> bytes:
        """`v`'s JSON text, or the reference to it when it is long."""
        text = self._json(v)
        if len(text) > SHARED_CHARS:
            values = self._values
            vid = values.get(text)
            if vid is None:
                vid = values[text] = len(values)
            return b'{"$value":%d}' % vid
        return text

    def _json(self, v: Any) -> bytes:
        """`v`'s JSON text: orjson's, unless the standard library's must be written (see the module doc)."""
        try:
            text = orjson.dumps(v, self._default, _ORJSON)
        except TypeError:
            return self._stdlib_json(v)
        # (bytes.find, not `in`: `in` first tries its operand as an integer, raising and clearing a TypeError)
        if text.find(b"null") >= 0 or not text.isascii() and any(text.find(b) >= 0 for b in _LINE_BREAKS):
            return self._stdlib_json(v)
        # A copy is what is kept: orjson's own bytes sit in a larger allocation shrunk in
        # place, and keeping thousands of them costs several times the encoding itself.
        return b"%b" % text

    def _stdlib_json(self, v: Any) -> bytes:
        # (an encoder kept on the log would hold the log in a reference cycle, leaving its
        # memory to the garbage collector: this path is rare enough to build one per call)
        encode = _encoder(self._default)
        try:
            return encode(v).encode("ascii")
        except (ValueError, TypeError, RecursionError):  # non-finite floats, odd keys, deep or cyclic data
            return encode(self._as_data(v, 0)).encode("ascii")

    def _default_output(self, o: Any) -> Any:
        """`_default` for orjson encoding a firing's ports: an array's reference is remembered in the memo."""
        if type(o) is self._ndarray:
            ref = b'{"$array":%d}' % self._numpy_array_id(o)
            self._memo[id(o)] = (o, ref)
            return orjson.Fragment(ref)
        return self._default(o)

    def _default_input(self, o: Any) -> Any:
        """`_default_output` for a consumer's inputs: an array encoded in the memo's window is not read again."""
        hit = self._memo.get(id(o))
        if hit is not None and hit[0] is o:
            return orjson.Fragment(hit[1])
        return self._default_output(o)

    def _numpy_array_id(self, o: Any) -> int:
        """The id of the array line holding a numpy array's content."""
        plain = self._plain_dtypes.get(id(o.dtype))
        if plain is not None and o.nbytes <= MAX_ARRAY_BYTES:  # the common case, without numpy calls
            key = (plain[1], o.shape, o.tobytes())
            aid = self._arrays.get(key)
            return self._content_id(key) if aid is None else aid
        return self._array_id(o)

    def _default(self, o: Any) -> Any:
        """The encoders' hook for what is not JSON data."""
        if type(o) is self._ndarray:
            return {"$array": self._numpy_array_id(o)}
        if isinstance(o, float):  # subclasses (numpy's float64): orjson leaves them to this hook
            return self._as_data(float(o), 1)
        if isinstance(o, tuple):  # named tuples: a list, as json writes them
            return list(o)
        if getattr(o, "ndim", None) == 0 and hasattr(o, "item"):  # numpy scalars
            return self._as_data(o.item(), 1)
        if hasattr(o, "shape") and hasattr(o, "dtype"):
            return {"$array": self._array_id(o)}
        return tagged_object(o, lambda x: self._as_data(x, 1))

    def _as_data(self, v: Any, depth: int) -> Any:
        """The slow path: `v` as JSON data (non-finite floats, keys that are not
        strings or numbers, nesting too deep or cyclic)."""
        if isinstance(v, float):
            return float(v) if math.isfinite(v) else {"$float": repr(float(v))}
        if v is None or type(v) in (str, int, bool):
            return v
        if isinstance(v, (str, int)):  # subclasses: as the value they hold
            return str(v) if isinstance(v, str) else int(v)
        if depth >= _MAX_DEPTH:
            return {"$object": type(v).__qualname__, "repr": "<nested too deep to log>"}
        if isinstance(v, dict):
            if all(isinstance(k, (str, int, float)) or k is None for k in v):
                return {k if type(k) is str else json.dumps(k): self._as_data(x, depth + 1) for k, x in v.items()}
            return {"$dict": [[self._as_data(k, depth + 1), self._as_data(x, depth + 1)] for k, x in v.items()]}
        if isinstance(v, (list, tuple)):
            return [self._as_data(x, depth + 1) for x in v]
        if getattr(v, "ndim", None) == 0 and hasattr(v, "item"):
            return self._as_data(v.item(), depth + 1)
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            return {"$array": self._array_id(v)}
        return tagged_object(v, lambda x: self._as_data(x, depth + 1))

    def _array_id(self, a: Any) -> int:
        lines = self._array_lines
        try:
            import numpy as np  # only reached when an array is being logged

            arr = a if type(a) is np.ndarray else np.asarray(a)
            if arr.dtype.hasobject:
                lines.append({"dtype": arr.dtype.str, "shape": list(arr.shape),
                              "items": self._as_data(arr.tolist(), 1)})
                return len(lines) - 1
            if arr.nbytes > MAX_ARRAY_BYTES:
                record: dict[str, Any] = {"dtype": arr.dtype.str, "shape": list(arr.shape), "omitted": True}
                if arr.size and arr.dtype.kind in "biuf":
                    record.update(min=arr.min().item(), max=arr.max().item(), mean=float(arr.mean()))
                lines.append(record)
                return len(lines) - 1
            key = (arr.dtype.str, arr.shape, arr.tobytes())
            self._plain_dtypes[id(arr.dtype)] = (arr.dtype, key[0])  # (the dtype kept: its id stays its own)
        except Exception as exc:  # an array-like numpy cannot read
            lines.append({"dtype": str(getattr(a, "dtype", "?")), "shape": list(getattr(a, "shape", ())),
                          "error": f"{type(exc).__name__}: {exc}"})
            return len(lines) - 1
        return self._content_id(key)

    def _content_id(self, key: tuple) -> int:
        """The id of the array line holding this (dtype, shape, bytes), added if new."""
        aid = self._arrays.get(key)
        if aid is None:
            aid = self._arrays[key] = len(self._array_lines)
            self._array_lines.append(key)
        return aid

    # -- after the episode -----------------------------------------------------------
    def to_lines(self) -> list[str]:
        """The JSONL lines: the episode header, the shared arrays and values, then one line per firing."""
        return [line.decode("utf-8") for line in self._byte_lines()]

    def _byte_lines(self) -> list[bytes]:
        self.forget()  # release the values the memo holds
        header = {"kind": "episode", "format": FORMAT, "episode": self.episode, "result": self.result}
        if self.ports is not None:
            header["ports"] = self.ports
        lines = [self._json(header)]
        kinds: dict[tuple, bytes] = {}  # (dtype, shape) -> their JSON text
        last: dict[tuple, tuple[int, bytes]] = {}  # (dtype, shape) -> the last large array line's id and bytes
        for aid, entry in enumerate(self._array_lines):
            if type(entry) is tuple:  # (base64 needs no JSON escaping: formatted directly)
                dtype, shape, data = entry
                kind = kinds.get((dtype, shape))
                if kind is None:
                    kind = kinds[dtype, shape] = b'"dtype":%b,"shape":[%b]' % (
                        _quote(dtype), b",".join(b"%d" % n for n in shape))
                if len(data) >= CHANGES_MIN_BYTES:
                    before = last.get((dtype, shape))
                    last[dtype, shape] = (aid, data)
                    changes = None if before is None else _changes(before[1], data)
                    if changes is not None:
                        lines.append(b'{"kind":"array","id":%d,%b,"from":%d,%b}' % (aid, kind, before[0], changes))
                        continue
                lines.append(b'{"kind":"array","id":%d,%b,"base64":"%b"}' % (aid, kind, base64.b64encode(data)))
            else:
                lines.append(self._json({"kind": "array", "id": aid, **entry}))
        lines.extend(b'{"kind":"value","id":%d,"value":%b}' % (vid, text) for text, vid in self._values.items())
        lines.extend(self._firings)
        return lines

    @property
    def records(self) -> list[dict[str, Any]]:
        """The firing records so far, every value resolved (as `read_log` gives them)."""
        if self._resolved is None or self._pending:
            from harness.canvas.log_reader import parse_lines

            self._resolved = parse_lines(self.to_lines(), "episode log")[1]
        return self._resolved

    def write_jsonl(self, path: str | Path) -> Path:
        """Write the log's lines (atomically); returns the path."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        lines = self._byte_lines()
        lines.append(b"")  # (the last line's end: one join, no second copy)
        tmp.write_bytes(b"\n".join(lines))
        tmp.replace(p)
        return p


_FIRING_START = b'{"kind":"firing","node":%b,"type":%b,"tick":'
_FIRING_LINE = b'%b%d,"inputs":%b,"outputs":%b,"duration_s":%.7f,"error":%b%b}'


def _changes(before: bytes, after: bytes) -> bytes | None:
    """The `at` and `bytes` fields that turn `before` into `after` (of the same length),
    or None when they would not be under half the size of `after` in full."""
    import numpy as np

    now = np.frombuffer(after, np.uint8)
    at = (now != np.frombuffer(before, np.uint8)).nonzero()[0]
    if 5 * len(at) >= len(after) // 2:  # (an offset and a byte per change, against one each in full)
        return None
    return b'"at":"%b","bytes":"%b"' % (base64.b64encode(at.astype("<u4").tobytes()),
                                        base64.b64encode(now[at].tobytes()))


def logged_value(value: Any) -> Any:
    """`value` as the log writes it and `read_log` gives it back (arrays as their records)."""
    log = EpisodeLog()
    log.firing("value", "value", 0, None, {"value": value}, 0.0)
    return log.records[0]["outputs"]["value"]

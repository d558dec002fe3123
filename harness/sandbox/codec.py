"""Values across the sandbox boundary as plain data, never live objects.

`encode(value) -> bytes` accepts None, bool, int, float, str, bytes, lists,
tuples, dicts (any keys of these kinds), numpy arrays and scalars of numeric
or boolean dtype, and subclasses of str/int/float (sent as the base type);
anything else raises `CodecError` naming where in the value it sits.
`decode(bytes)` rebuilds the value as fresh objects: nothing decoded refers
to anything of the sender, and decoding never runs code of the sender
(JSON plus tagged arrays; no pickle).
"""

from __future__ import annotations

import base64
import json

import numpy as np

MAX_DEPTH = 64
_TAG = "\x00"           # dict keys starting with NUL mark the codec's own records
_TUPLE, _MAP, _ARRAY, _SCALAR, _BYTES = (_TAG + c for c in "tmasb")
_NUMERIC_KINDS = frozenset("biufc")


class CodecError(ValueError):
    """A value cannot cross the boundary (not plain data, too deep, or a malformed record)."""


def encode(value) -> bytes:
    return json.dumps(_encode(value, "value", 0), separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def decode(data: bytes):
    try:
        return _decode(json.loads(data), 0)
    except (ValueError, TypeError, RecursionError, KeyError, IndexError) as exc:
        raise CodecError(f"malformed value: {type(exc).__name__}: {str(exc)[:200]}") from None


def _encode(value, where: str, depth: int):
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is float or kind is str:
        return value
    if depth > MAX_DEPTH:
        raise CodecError(f"{where}: nested deeper than {MAX_DEPTH} levels")
    if kind is list:
        return [_encode(item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value)]
    if kind is dict:
        if all(type(key) is str and not key.startswith(_TAG) for key in value):
            return {key: _encode(item, f"{where}[{key!r}]", depth + 1) for key, item in value.items()}
        return {_MAP: [[_encode(key, f"{where} key", depth + 1), _encode(item, f"{where}[{key!r}]", depth + 1)]
                       for key, item in value.items()]}
    if kind is tuple:
        return {_TUPLE: [_encode(item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value)]}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _NUMERIC_KINDS:
            raise CodecError(f"{where}: an array of dtype {value.dtype} cannot cross the sandbox boundary "
                             "(numeric and boolean arrays only)")
        return {_ARRAY: [value.dtype.str, list(value.shape), _b64(np.ascontiguousarray(value).tobytes())]}
    if isinstance(value, np.generic) and value.dtype.kind in _NUMERIC_KINDS:
        return {_SCALAR: [value.dtype.str, _b64(value.tobytes())]}
    if kind is bytes or kind is bytearray:
        return {_BYTES: _b64(bytes(value))}
    for base in (bool, int, float, str):  # IntEnum, str subclasses: their plain value
        if isinstance(value, base):
            return base(value)
    raise CodecError(f"{where}: a {kind.__name__} cannot cross the sandbox boundary "
                     "(plain data and numeric arrays only)")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _decode(value, depth: int):
    if depth > MAX_DEPTH + 2:
        raise CodecError(f"nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    if kind is list:
        return [_decode(item, depth + 1) for item in value]
    if kind is not dict:
        return value
    if len(value) == 1:
        (key, body), = value.items()
        if key == _TUPLE:
            return tuple(_decode(item, depth + 1) for item in body)
        if key == _MAP:
            return {_hashable(_decode(k, depth + 1)): _decode(v, depth + 1) for k, v in body}
        if key == _ARRAY:
            dtype, shape, data = body
            return _array(dtype, shape, data)
        if key == _SCALAR:
            dtype, data = body
            return _array(dtype, [], data)[()]
        if key == _BYTES:
            return base64.b64decode(body, validate=True)
    return {key: _decode(item, depth + 1) for key, item in value.items()}


def _array(dtype: str, shape: list, data: str) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind not in _NUMERIC_KINDS or dt.fields is not None or dt.subdtype is not None:
        raise CodecError(f"array of dtype {dtype!r} refused")
    if not all(type(n) is int and n >= 0 for n in shape):
        raise CodecError(f"bad array shape {shape!r}")
    raw = base64.b64decode(data, validate=True)
    return np.frombuffer(raw, dtype=dt).reshape(shape).copy()


def _hashable(key):
    hash(key)  # a list or dict decoded as a key is malformed (TypeError, reported by decode)
    return key

"""Values across the sandbox boundary as plain data, never live objects.

`encode(value) -> bytes` accepts None, bool, int, float, str, bytes, lists,
tuples, dicts (any keys of these kinds), numpy arrays and scalars of numeric
or boolean dtype, and subclasses of str/int/float (sent as the base type);
anything else raises `CodecError` naming where in the value it sits (the
walk that finds the path runs only then).
`decode(bytes)` rebuilds the value as fresh objects: nothing decoded refers
to anything of the sender, and decoding never runs code of the sender.

The format is MessagePack (`msgpack`, its C packer and unpacker): maps,
arrays, strings, binary and numbers natively; tuples, numpy arrays, numpy
scalars and integers beyond 64 bits as extension records of this module.
Both ways a value nests at most `MAX_DEPTH` levels of lists, tuples and
dicts. Every level costs its encoding at least one container header byte, so
bytes holding at most `MAX_DEPTH` of those cannot nest deeper (one C pass);
only other values are walked (over containers; leaves are checked by type in C).
Decoding is bounded by the data: msgpack refuses lengths beyond the bytes
given, and extension records (each unpacked on its own) nest at most
`MAX_DEPTH` before the walk runs.
"""

from __future__ import annotations

import sys

import msgpack

MAX_DEPTH = 64
_CONTAINERS = frozenset((list, tuple, dict))
# msgpack's container and extension headers: fixmap, fixarray, array/map 16/32, fixext 1-16, ext 8/16/32
_HEADER_BYTES = frozenset([*range(0x80, 0xA0), *range(0xDC, 0xE0), *range(0xD4, 0xD9), *range(0xC7, 0xCA)])
_OTHER_BYTES = bytes(b for b in range(256) if b not in _HEADER_BYTES)
_TUPLE, _ARRAY, _SCALAR, _BIGINT = 1, 2, 3, 4
_NUMERIC_KINDS = frozenset("biufc")
_INT64_MIN, _UINT64_MAX = -(1 << 63), (1 << 64) - 1
_DECODE_ERRORS = (ValueError, TypeError, RecursionError, KeyError, IndexError, OverflowError,
                  msgpack.UnpackException)


class CodecError(ValueError):
    """A value cannot cross the boundary (not plain data, too deep, or a malformed record)."""


class _Refused(Exception):
    def __init__(self, value, why: str):
        super().__init__(why)
        self.value, self.why = value, why


def encode(value) -> bytes:
    try:
        data = _pack(value, _default)
    except CodecError:
        raise
    except _Refused as refused:
        raise CodecError(f"{_path(value, refused.value) or 'value'}: {refused.why}") from None
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:  # msgpack's own limits (nesting, sizes)
        raise CodecError(f"value: {exc}") from None
    if _may_nest_deeper(data):
        _check_depth(value)
    return data


def _pack(value, default) -> bytes:
    return msgpack.packb(value, default=default, strict_types=True, use_bin_type=True, datetime=False)


def decode(data: bytes):
    try:
        value = _unpack(data, 0)
        if _may_nest_deeper(data):
            _check_depth(value)
        return value
    except CodecError:
        raise
    except _DECODE_ERRORS as exc:
        raise CodecError(f"malformed value: {type(exc).__name__}: {str(exc)[:200]}") from None


def _may_nest_deeper(data: bytes) -> bool:
    return len(data) > MAX_DEPTH and len(data.translate(None, _OTHER_BYTES)) > MAX_DEPTH


def _check_depth(value) -> None:
    if type(value) in _CONTAINERS and not _nests_within(value, 0):
        raise CodecError(f"value: nested deeper than {MAX_DEPTH} levels")


def _nests_within(container, depth: int) -> bool:
    items = container.values() if type(container) is dict else container
    if _CONTAINERS.isdisjoint(map(type, items)):
        return True
    return depth < MAX_DEPTH and all(_nests_within(item, depth + 1) for item in items if type(item) in _CONTAINERS)


def _unpack(data: bytes, depth: int):
    # timestamp=2: msgpack's own timestamp record (ext -1, never given to ext_hook) decodes as plain int nanoseconds
    return msgpack.unpackb(data, ext_hook=lambda code, body: _from_ext(code, body, depth), raw=False,
                           strict_map_key=False, use_list=True, timestamp=2)


def _from_ext(code: int, body: bytes, depth: int):
    if depth > MAX_DEPTH:
        raise CodecError(f"malformed value: nested deeper than {MAX_DEPTH} levels")
    if code == _TUPLE:
        items = _unpack(body, depth + 1)
        if type(items) is not list:
            raise CodecError("malformed value: a tuple record that holds no list")
        return tuple(items)
    if code == _ARRAY or code == _SCALAR:
        record = msgpack.unpackb(body, raw=False, use_list=True)  # no ext hook: an array holds only its header
        if not (type(record) is list and len(record) == 3):
            raise CodecError("malformed value: a bad array record")
        array = _array(*record)
        return array[()] if code == _SCALAR else array
    if code == _BIGINT:
        return int(body.decode("ascii"))
    raise CodecError(f"malformed value: unknown record kind {code}")


def _default(value):
    """What msgpack cannot pack as it is: the codec's own records, base values of subclasses, or a refusal."""
    kind = type(value)
    if kind is tuple:
        return msgpack.ExtType(_TUPLE, _pack(list(value), _default))
    np = sys.modules.get("numpy")  # not imported: no value can be an array (a sandbox need not import it)
    if np is not None and isinstance(value, np.ndarray):
        if value.dtype.kind not in _NUMERIC_KINDS:
            raise _Refused(value, f"an array of dtype {value.dtype} cannot cross the sandbox boundary "
                                  "(numeric and boolean arrays only)")
        return msgpack.ExtType(_ARRAY, msgpack.packb([value.dtype.str, value.shape, value.tobytes()]))
    if np is not None and isinstance(value, np.generic) and value.dtype.kind in _NUMERIC_KINDS:
        return msgpack.ExtType(_SCALAR, msgpack.packb([value.dtype.str, (), value.tobytes()]))
    if isinstance(value, int):  # beyond 64 bits, or an IntEnum & co.: its plain value
        number = int.__int__(value)  # the base type's own conversion: no method of a subclass runs
        if _INT64_MIN <= number <= _UINT64_MAX:
            return number
        return msgpack.ExtType(_BIGINT, str(number).encode("ascii"))
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        return str.__str__(value)
    raise _Refused(value, f"a {kind.__name__} cannot cross the sandbox boundary (plain data and numeric arrays only)")


def _path(value, target, where: str = "value", depth: int = 0) -> str | None:
    """Where `target` (by identity) sits in `value`, as `value['key'][3]`; None if not found."""
    if value is target:
        return where
    if depth > 2 * MAX_DEPTH:
        return None
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            found = ((f"{where} key" if _path(key, target, where, depth + 1) else None)
                     or _path(item, target, f"{where}[{key!r}]", depth + 1))
            if found:
                return found
    elif kind is list or kind is tuple:
        for i, item in enumerate(value):
            found = _path(item, target, f"{where}[{i}]", depth + 1)
            if found:
                return found
    return None


def _array(dtype, shape, data):
    import numpy as np

    if type(dtype) is not str or type(data) is not bytes:
        raise CodecError("malformed value: a bad array record")
    dt = np.dtype(dtype)
    if dt.kind not in _NUMERIC_KINDS or dt.fields is not None or dt.subdtype is not None:
        raise CodecError(f"array of dtype {dtype!r} refused")
    if not (type(shape) is list and all(type(n) is int and n >= 0 for n in shape)):
        raise CodecError(f"bad array shape {shape!r}")
    return np.frombuffer(data, dtype=dt).reshape(shape).copy()

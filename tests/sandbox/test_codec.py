"""The sandbox codec: plain data both ways as fresh objects; anything else, too deep, or
malformed bytes is a CodecError naming what is wrong (never a crash, never code run)."""

from __future__ import annotations

import enum

import msgpack
import numpy as np
import pytest

from harness.models.context_harness import SandboxedHarness
from harness.sandbox import codec


class Colour(enum.IntEnum):
    RED = 3


class Name(str):
    def __str__(self):
        return "not me"


def _nested(kind, depth: int):
    value = kind()
    for _ in range(depth):
        value = kind([value]) if kind is not dict else {"k": value}
    return value


@pytest.mark.parametrize("value", [
    None, True, 0, -5, 2**64 - 1, -(2**63), 2**70, -(2**90), 1.5, float("inf"), "héllo \x00", b"\x00\xff",
    [1, [2, (3, 4)]], (), (1, (2, ())), {1: "a", (1, 2): [3], "\x00t": {"x": None}}, {"a": {"b": {"c": [1.0]}}},
])
def test_plain_data_round_trips_with_its_types(value):
    out = codec.decode(codec.encode(value))
    assert out == value and type(out) is type(value)
    assert repr(out) == repr(value)  # tuples stay tuples, lists lists, all the way down


def test_arrays_and_scalars_arrive_as_fresh_writable_copies():
    array = np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2]  # not contiguous
    value = {"a": array, "s": np.float32(1.5), "b": np.bool_(True), "z": np.zeros((0, 3)), "d": np.array(2.0)}
    out = codec.decode(codec.encode(value))
    assert np.array_equal(out["a"], array) and out["a"].dtype == np.int16 and out["a"].flags.writeable
    out["a"][0, 0] = 99
    assert array[0, 0] == 0
    assert type(out["s"]) is np.float32 and out["s"] == 1.5 and type(out["b"]) is np.bool_
    assert out["z"].shape == (0, 3) and out["d"].shape == () and isinstance(out["d"], np.ndarray)


def test_subclasses_cross_as_their_base_value_without_running_their_methods():
    out = codec.decode(codec.encode([Colour.RED, Name("mine"), bytearray(b"ab")]))
    assert out == [3, "mine", b"ab"] and [type(v) for v in out] == [int, str, bytes]


@pytest.mark.parametrize("value,where", [
    ({"a": [1, object()]}, "value['a'][1]: a object"),
    ({"k": np.array(["x"])}, "value['k']: an array of dtype <U1"),
    ({"k": np.array([None], dtype=object)}, "value['k']: an array of dtype object"),
    ((1, [2, {3: {4}}]), "value[1][1][3]: a set"),
    ({(1, print): 0}, "value key: a builtin_function_or_method"),
    ({"d": __import__("collections").OrderedDict()}, "value['d']: a OrderedDict"),
])
def test_anything_but_plain_data_is_refused_naming_where(value, where):
    with pytest.raises(codec.CodecError, match="cannot cross the sandbox boundary") as err:
        codec.encode(value)
    assert str(err.value).startswith(where)


@pytest.mark.parametrize("kind", [list, tuple, dict])
def test_nesting_beyond_the_limit_is_refused_both_ways(kind):
    assert codec.decode(codec.encode(_nested(kind, codec.MAX_DEPTH))) == _nested(kind, codec.MAX_DEPTH)
    too_deep = _nested(kind, codec.MAX_DEPTH + 1)
    with pytest.raises(codec.CodecError, match="nested deeper than 64 levels"):
        codec.encode(too_deep)
    if kind is not tuple:  # a sender that skips the check (plain msgpack): the receiver refuses it
        with pytest.raises(codec.CodecError, match="nested deeper than 64 levels"):
            codec.decode(msgpack.packb(too_deep))


def _ext_tower(depth: int) -> bytes:
    body = msgpack.packb([])
    for _ in range(depth):
        body = msgpack.packb(msgpack.ExtType(1, body))
    return body


@pytest.mark.parametrize("data,needle", [
    (b"\xc1", "malformed value"),                                            # a byte msgpack never uses
    (b"\x92\x01", "malformed value"),                                        # cut short
    (msgpack.packb([1]) + b"\x00", "malformed value"),                       # trailing bytes
    (msgpack.packb(msgpack.ExtType(9, b"")), "unknown record kind 9"),
    (msgpack.packb(msgpack.ExtType(1, msgpack.packb({"a": 1}))), "tuple record that holds no list"),
    (msgpack.packb(msgpack.ExtType(2, msgpack.packb(["|O", [1], b"\0" * 8]))), "dtype '|O' refused"),
    (msgpack.packb(msgpack.ExtType(2, msgpack.packb(["<i4", [3], b"\0" * 4]))), "malformed value"),
    (msgpack.packb(msgpack.ExtType(2, msgpack.packb(["<i4", [-1], b""]))), "bad array shape"),
    (msgpack.packb(msgpack.ExtType(2, msgpack.packb([1, [1], b""]))), "bad array record"),
    (msgpack.packb(msgpack.ExtType(4, b"1" * 5000)), "malformed value"),     # an integer of 5,000 digits
    (msgpack.packb({(1,): 1}), "malformed value"),                           # a list as a map key
    (_ext_tower(10_000), "nested deeper than 64 levels"),                    # records in records, unbounded
    (b"\xdd\xff\xff\xff\xff", "malformed value"),                            # an array of 4 G items announced
])
def test_malformed_bytes_are_a_codec_error(data, needle):
    with pytest.raises(codec.CodecError, match=needle):
        codec.decode(data)


def test_msgpack_timestamps_decode_as_plain_integers():
    out = codec.decode(msgpack.packb([msgpack.Timestamp(2, 5)], datetime=False))
    assert out == [2_000_000_005] and type(out[0]) is int


def test_a_sandbox_frame_larger_than_one_read_arrives_whole():
    history = [{"round": i, "decision": "x" * 1000} for i in range(300)]  # ~300 kB: many reads each way
    harness = SandboxedHarness("def build_context(history):\n"
                               "    return str(len(history)) + ':' + history[-1]['decision'] * 19\n")
    try:
        assert harness(history) == "300:" + "x" * 19000
        assert harness([{"decision": "y"}]) == "1:" + "y" * 19  # nothing of the last frame is left over
        assert harness.starts == 1
    finally:
        harness.close()

"""EpisodeLog summaries: the fast paths give the plain rule's text, and the
per-value memo never shows a stale summary of a value changed in place."""

from __future__ import annotations

import base64
import json
import random

import numpy as np
from canvas_corridor import REG, corridor_graph

from harness.canvas import EpisodeLog, GraphRunner
from harness.canvas.episode_log import MAX_SUMMARY, summarize
from harness.canvas.registry import Node, node_type


def reference_summary(value) -> str:
    """The plain rule the log documents, built in full and then cut."""
    def short(v, depth):
        shape = getattr(v, "shape", None)
        if shape is not None and hasattr(v, "dtype"):
            return f"<{type(v).__name__} shape={tuple(shape)} dtype={v.dtype}>"
        if isinstance(v, str):
            return repr(v if len(v) <= 80 else v[:77] + "...")
        if isinstance(v, dict):
            if depth > 2:
                return "{...}"
            items = [f"{short(k, depth + 1)}: {short(x, depth + 1)}" for k, x in list(v.items())[:8]]
            return "{" + ", ".join(items) + (", ..." if len(v) > 8 else "") + "}"
        if isinstance(v, (list, tuple)):
            if depth > 2:
                return "[...]"
            items = [short(x, depth + 1) for x in v[:8]]
            more = f", ... ({len(v)} items)" if len(v) > 8 else ""
            open_, close = ("[", "]") if isinstance(v, list) else ("(", ")")
            return open_ + ", ".join(items) + more + close
        text = repr(v)
        return text if len(text) <= 80 else text[:77] + "..."

    text = short(value, 0)
    return text if len(text) <= MAX_SUMMARY else text[:MAX_SUMMARY - 3] + "..."


class _Label(str):
    pass


def _random_value(rng: random.Random, depth: int = 0):
    def size():
        return rng.choice([rng.randint(0, 3), rng.randint(7, 9), rng.randint(0, 12)])

    r = rng.random()
    if depth > 4 or r < 0.3:
        return rng.choice([rng.randint(-5, 10 ** rng.randint(1, 90)), -10 ** rng.randint(60, 80), rng.random(),
                           True, None, "x" * rng.randint(0, 100), _Label("s" * rng.randint(70, 90)), "it's \"q\"\n",
                           np.zeros((2, rng.randint(1, 3))), 1 + 2j, b"xy", np.int64(3), frozenset({1})])
    if r < 0.55:
        return [_random_value(rng, depth + 1) for _ in range(size())]
    if r < 0.7:
        return tuple(_random_value(rng, depth + 1) for _ in range(size()))
    if r < 0.85:
        return {rng.choice(["k" * rng.randint(1, 90), rng.randint(0, 9), (1, 2), None]): _random_value(rng, depth + 1)
                for _ in range(size())}
    return {str(i): _random_value(rng, depth + 1) for i in range(size())}


def test_summaries_match_the_plain_rule():
    rng = random.Random(7)
    for _ in range(3000):
        value = _random_value(rng)
        assert summarize(value) == reference_summary(value), value
    cells = [{"fwd": i % 7, "right": i // 7 - 3, "code": (2, 5, 0)} for i in range(49)]
    for value in (cells, (1,), [(1,)], {"a": [1, 2]}, [[[[1]]]], {"a": {"b": {"c": {}}}}, np.zeros((7, 7, 3))):
        assert summarize(value) == reference_summary(value)


def test_memo_never_shows_a_value_changed_in_place():
    log = EpisodeLog()
    fb = {"actions": ["left"]}
    log.firing("sim", "S", 0, None, {"feedback": fb}, 0.0)
    log.firing("pose", "P", 0, {"feedback": fb}, {}, 0.0)
    # the simulator's next action in the same tick changes its feedback in place
    fb["actions"].append("forward")
    log.firing("sim", "S", 0, {"action": "forward"}, {"other": [1]}, 0.0)
    log.firing("pose", "P", 1, {"feedback": fb}, {}, 0.0)
    assert log.records[1]["inputs"]["feedback"] == "{'actions': ['left']}"
    assert log.records[3]["inputs"]["feedback"] == "{'actions': ['left', 'forward']}"

    # a consumer reads last tick's map (delay edge) before its owner changes and re-emits it
    log = EpisodeLog()
    m = {"seen": 1}
    log.firing("planner", "P", 1, {"map": m}, {}, 0.0)
    m["seen"] = 2
    log.firing("memory", "M", 1, {}, {"map": m}, 0.0)
    log.firing("act", "A", 1, {"map": m}, {}, 0.0)
    assert [r["inputs"].get("map") or r["outputs"].get("map") for r in log.records] == \
        ["{'seen': 1}", "{'seen': 2}", "{'seen': 2}"]

    log.forget()
    m["seen"] = 3
    log.firing("act2", "A", 1, {"map": m}, {}, 0.0)
    assert log.records[-1]["inputs"]["map"] == "{'seen': 3}"


@node_type("test.LogTally", registry=REG, inputs={"position": "Int"}, outputs={"tally": "Any"})
class LogTally(Node):
    """Emits the same dict every tick, changed in place."""

    def reset(self, ctx):
        self.tally = {"pos": None}

    def step(self, inputs, ctx):
        self.tally["pos"] = inputs["position"]
        return {"tally": self.tally}


@node_type("test.LogSink", registry=REG,
           inputs={"value": "Any", "after": {"type": "Any", "required": False}}, outputs={})
class LogSink(Node):
    def step(self, inputs, ctx):
        return {}


@node_type("test.LogCellReader", registry=REG, inputs={"position": "Int"}, outputs={"cell": "Any"},
           state={"read": ["$cell"]}, config_schema={"type": "object", "properties": {"cell": {"type": "string"}}})
class LogCellReader(Node):
    def step(self, inputs, ctx):
        return {"cell": ctx.read(self.config["cell"])}  # the live value


@node_type("test.LogCellAppender", registry=REG,
           inputs={"position": "Int", "after": {"type": "Any", "required": False}}, outputs={"done": "Any"},
           state={"write": ["$cell"]}, config_schema={"type": "object", "properties": {"cell": {"type": "string"}}})
class LogCellAppender(Node):
    def step(self, inputs, ctx):
        ctx.write(self.config["cell"], inputs["position"])
        return {"done": True}


def test_logged_summaries_follow_values_changed_between_ticks(tmp_path):
    g = corridor_graph()
    g["nodes"]["tally"] = {"type": "test.LogTally", "config": {}}
    g["nodes"]["sink"] = {"type": "test.LogSink", "config": {}}
    g["edges"] += [{"from": "sim.position", "to": "tally.position"}, {"from": "tally.tally", "to": "sink.value"}]
    log = EpisodeLog()
    with GraphRunner(g, registry=REG) as runner:
        runner.run_episode({"seed": 0}, log)
        first = [r["inputs"]["value"] for r in log.records if r["node"] == "sink"]
        assert first == [f"{{'pos': {p}}}" for p in range(4)]
        runner.run_episode({"seed": 1}, log)  # the same log and node objects again
    sinks = [r["inputs"]["value"] for r in log.records if r["node"] == "sink"]
    assert sinks == first * 2
    lines = [json.loads(x) for x in log.write_jsonl(tmp_path / "log.jsonl").read_text().splitlines()]
    assert [x["inputs"]["value"] for x in lines if x.get("node") == "sink"] == sinks


def test_logged_summaries_follow_cells_changed_by_another_node():
    g = corridor_graph()
    g["nodes"].update({"reader": {"type": "test.LogCellReader", "config": {"cell": "c"}},
                       "appender": {"type": "test.LogCellAppender", "config": {"cell": "c"}},
                       "sink": {"type": "test.LogSink", "config": {}}})
    g["edges"] += [{"from": "sim.position", "to": "reader.position"},
                   {"from": "sim.position", "to": "appender.position"},
                   {"from": "reader.cell", "to": "appender.after"},  # orders reader, appender, sink
                   {"from": "reader.cell", "to": "sink.value"},
                   {"from": "appender.done", "to": "sink.after"}]
    g["state"] = {"c": {"type": "List[Int]", "reducer": "append", "lifetime": "episode"}}
    g["grants"] = {"reader": {"read": ["c"]}, "appender": {"write": ["c"]}}
    log = EpisodeLog()
    with GraphRunner(g, registry=REG) as runner:
        assert runner.run_episode({"seed": 0}, log)["success"]
    readers = [r["outputs"]["cell"] for r in log.records if r["node"] == "reader"]
    sinks = [r["inputs"]["value"] for r in log.records if r["node"] == "sink"]
    assert readers == ["[]", "[0]", "[0, 1]", "[0, 1, 2]"]  # read before the tick's append
    assert sinks == ["[0]", "[0, 1]", "[0, 1, 2]", "[0, 1, 2, 3]"]  # after it


# -- the log's content: unchanged by the speed work, arrays in full ------------------

@node_type("test.LogPainter", registry=REG, inputs={"position": "Int"},
           outputs={"canvas": "Any", "view": "Any", "label": "Text", "pair": "Any"})
class LogPainter(Node):
    """Paints its position into one array it owns (changed in place every tick, as
    a map is) and emits a dict holding a fresh array, a string and a tuple."""

    def reset(self, ctx):
        self.canvas = np.zeros((3, 4), dtype=np.int16)

    def step(self, inputs, ctx):
        p = inputs["position"]
        self.canvas[p % 3, p % 4] += p + 1
        view = {"image": np.arange(6, dtype=np.uint8).reshape(2, 3) * p, "dir": p, "tags": ["a", p]}
        return {"canvas": self.canvas, "view": view, "label": f"at {p}", "pair": (p, None)}


def _painted_graph() -> dict:
    g = corridor_graph()
    g["nodes"].update({"painter": {"type": "test.LogPainter", "config": {}},
                       "sink": {"type": "test.LogSink", "config": {}},
                       "late": {"type": "test.LogSink", "config": {}}})
    g["edges"] += [{"from": "sim.position", "to": "painter.position"},
                   {"from": "painter.canvas", "to": "sink.value"},
                   {"from": "painter.view", "to": "sink.after"},
                   {"from": "painter.canvas", "to": "late.value", "delay": 1}]
    return g


class _EagerLog(EpisodeLog):
    """The log as it was before the speed work: every port summarised by the
    plain rule when the node fires, and each array copied then."""

    def __init__(self):
        super().__init__()
        self.snapshots: list[list] = []

    def firing(self, node, node_type, tick, inputs, outputs, duration_s, error=None, usage=None, self_fields=None):
        def texts(ports):
            return None if ports is None else {k: reference_summary(v) for k, v in ports.items()}

        arrays = []
        for ports in (inputs, outputs):
            for v in (ports or {}).values():
                for x in (v.values() if isinstance(v, dict) else [v]):
                    if isinstance(x, np.ndarray):
                        arrays.append(x.copy())
        record = {"node": node, "type": node_type, "tick": tick, "inputs": texts(inputs), "outputs": texts(outputs),
                  "duration_s": round(duration_s, 7), "error": error}
        if self_fields:
            record["self"] = self_fields
        self._records.append(record)
        self.snapshots.append(arrays)


def _decoded(entry: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(entry["base64"]), entry["dtype"]).reshape(entry["shape"])


def test_log_content_equals_the_eager_plain_rule_and_arrays_are_complete():
    g = _painted_graph()
    fast, eager = EpisodeLog(), _EagerLog()
    with GraphRunner(g, registry=REG) as runner:
        runner.run_episode({"seed": 0}, fast)
        runner.run_episode({"seed": 0}, eager)
    fast_records, eager_records = fast.records, eager.records
    assert len(fast_records) == len(eager_records) > 10

    def without_timing(record):
        return {k: v for k, v in record.items() if k not in ("duration_s", "arrays")}

    assert [without_timing(r) for r in fast_records] == [without_timing(r) for r in eager_records]
    # every array that was on a port is in the log in full, as it was then:
    # in the record itself or (an input read in the same tick) in an earlier one
    for i, (record, arrays) in enumerate(zip(fast_records, eager.snapshots)):
        seen = [_decoded(e) for r in fast_records[:i + 1] if r["tick"] == record["tick"]
                for e in r.get("arrays", {}).values()]
        for array in arrays:
            assert any(a.dtype == array.dtype and np.array_equal(a, array) for a in seen), (record, array)
    painter = next(r for r in fast_records if r["node"] == "painter" and r["tick"] == 2)
    assert set(painter["arrays"]) == {"outputs/canvas", "outputs/view/image"}
    assert painter["arrays"]["outputs/view/image"]["dtype"] == "|u1"
    assert _decoded(painter["arrays"]["outputs/view/image"]).tolist() == [[0, 2, 4], [6, 8, 10]]


def test_written_lines_follow_the_episode_log_schema(tmp_path):
    from harness.schemas import validate_instance

    log = EpisodeLog()
    with GraphRunner(_painted_graph(), registry=REG) as runner:
        runner.run_episode({"seed": 0}, log)
    log.firing("big", "T", 9, None, {"huge": np.zeros(300_000), "things": np.array([{"a": 1}, None])}, 0.0)
    lines = [json.loads(x) for x in log.write_jsonl(tmp_path / "e.jsonl").read_text().splitlines()]
    for line in lines:
        assert validate_instance("episode_log_line", line) == [], line
    big = lines[-1]["arrays"]
    assert big["outputs/huge"]["omitted"] and big["outputs/huge"]["max"] == 0.0
    assert big["outputs/things"]["items"] == [{"a": 1}, None]

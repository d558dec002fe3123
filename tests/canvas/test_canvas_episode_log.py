"""EpisodeLog: every port value logged in full as data (the plain rule, checked
on random values), long values and arrays stored once, objects by what they
are, and the per-value memo never showing a stale snapshot of a value changed
in place."""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import random

import numpy as np
import pytest
import canvas_corridor
from canvas_corridor import REG, corridor_graph
from log_snapshot_kit import EagerLog, deferred_and_eager

from harness.canvas import EpisodeLog, GraphRunner
from harness.canvas.episode_log import INLINE_CHARS, SHARED_CHARS, logged_value
from harness.canvas.registry import Node, node_type
from harness.errors import UserError
from harness.evaluation.trace import array_of, read_log


def reference(v):
    """The plain rule the schema documents, applied recursively."""
    if isinstance(v, float):
        return float(v) if math.isfinite(v) else {"$float": repr(float(v))}
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (str, int)):
        return str(v) if isinstance(v, str) else int(v)
    if isinstance(v, np.generic):
        return reference(v.item())
    if isinstance(v, np.ndarray):
        return {"$array": {"dtype": v.dtype.str, "shape": list(v.shape),
                           "base64": base64.b64encode(np.ascontiguousarray(v).tobytes()).decode()}}
    if isinstance(v, (list, tuple)):
        return [reference(x) for x in v]
    if isinstance(v, dict):
        if all(isinstance(k, (str, int, float)) or k is None for k in v):
            return {k if isinstance(k, str) else json.dumps(k): reference(x) for k, x in v.items()}
        return {"$dict": [[reference(k), reference(x)] for k, x in v.items()]}
    if isinstance(v, (set, frozenset)):
        return {"$set": [reference(x) for x in sorted(v)]}
    if isinstance(v, bytes):
        return {"$bytes": base64.b64encode(v).decode()}
    return {"$object": type(v).__qualname__, "repr": repr(v)}


class _Label(str):
    pass


def _random_value(rng: random.Random, depth: int = 0):
    def size():
        return rng.choice([rng.randint(0, 3), rng.randint(0, 6)])

    r = rng.random()
    if depth > 3 or r < 0.3:
        return rng.choice([rng.randint(-5, 10 ** rng.randint(1, 90)), rng.random(), float("nan"), -math.inf,
                           True, None, "x" * rng.randint(0, 400), _Label("s" * rng.randint(70, 90)), "it's \"q\"\n",
                           "é\u2028", np.zeros((2, rng.randint(1, 3))), np.arange(3, dtype=np.uint8), 1 + 2j, b"xy",
                           np.int64(3), np.float32(0.5), np.float64("nan"), frozenset({1, 2})])
    if r < 0.55:
        return [_random_value(rng, depth + 1) for _ in range(size())]
    if r < 0.7:
        return tuple(_random_value(rng, depth + 1) for _ in range(size()))
    if r < 0.85:
        return {rng.choice(["k" * rng.randint(1, 90), rng.randint(0, 9), (1, 2), None]): _random_value(rng, depth + 1)
                for _ in range(size())}
    return {str(i): _random_value(rng, depth + 1) for i in range(size())}


def test_values_are_logged_in_full_by_the_plain_rule(tmp_path):
    rng = random.Random(7)
    values = [_random_value(rng) for _ in range(800)]
    log = EpisodeLog()
    for i, value in enumerate(values):
        log.firing("n", "T", i, None, {"v": value}, 0.0)
    written = read_log(log.write_jsonl(tmp_path / "log.jsonl"))[1]
    for value, record, again in zip(values, log.records, written):
        assert record["outputs"]["v"] == reference(value) == again["outputs"]["v"], value
    # the values that failed the C-speed path (non-finite floats, tuple keys) went through the slow one
    assert logged_value({(1, 2): math.nan}) == {"$dict": [[[1, 2], {"$float": "nan"}]]}


def test_long_values_and_arrays_are_stored_once(tmp_path):
    prompt = "describe the scene " * 40
    image = np.arange(12, dtype=np.uint8).reshape(2, 6)
    log = EpisodeLog()
    for tick in range(5):
        log.firing("llm", "T", tick, {"prompt": prompt, "image": image.copy()},
                   {"reply": f"step {tick}", "seen": {"prompt": prompt, "image": image.copy()}}, 0.0)
    lines = [json.loads(x) for x in log.write_jsonl(tmp_path / "log.jsonl").read_text().splitlines()]
    kinds = [x["kind"] for x in lines]
    assert kinds.count("array") == 1 and kinds.count("value") == 2 and kinds.count("firing") == 5
    assert next(x for x in lines if x["kind"] == "value" and x["value"] == prompt)
    assert sum(len(x) for x in map(json.dumps, lines)) < 4 * len(prompt)
    for record in read_log(tmp_path / "log.jsonl")[1]:
        assert record["inputs"]["prompt"] == record["outputs"]["seen"]["prompt"] == prompt
        assert array_of(record["outputs"]["seen"]["image"]).tolist() == image.tolist()
    assert len(json.dumps("x" * SHARED_CHARS)) > SHARED_CHARS  # a string at the limit is inline, its JSON is not


class _Handle:
    def __init__(self, name):
        self.name = name

    def log_value(self):
        return {"lmp": self.name, "maps": np.ones(2)}


@dataclasses.dataclass
class _Pose:
    x: float
    y: float


def test_objects_are_logged_as_what_they_are_never_where_they_are():
    class Opaque:
        pass

    first, second = logged_value([_Handle("planner"), Opaque(), _Pose(1.0, 2.0)]), \
        logged_value([_Handle("planner"), Opaque(), _Pose(1.0, 2.0)])
    assert first == second  # new objects at other addresses: the same logged values
    handle, opaque, pose = first
    assert handle == {"$object": "_Handle", "value": {"lmp": "planner", "maps": {"$array": {
        "dtype": "<f8", "shape": [2], "base64": base64.b64encode(np.ones(2).tobytes()).decode()}}}}
    assert opaque["$object"].endswith("Opaque") and "0x" not in opaque["repr"]
    assert pose == {"$object": "_Pose", "value": {"x": 1.0, "y": 2.0}}
    assert logged_value([_Handle("planner")]) != logged_value([_Handle("composer")])


def test_large_arrays_keep_statistics_and_object_arrays_their_items(tmp_path):
    from harness.schemas import validate_instance

    log = EpisodeLog()
    log.episode, log.result, log.ports = {"seed": 0}, {"success": True}, {"n": {"type": "T", "outputs": {"a": "Any"}}}
    log.firing("n", "T", 0, None, {"huge": np.zeros(300_000), "things": np.array([{"a": 1}, None])}, 0.0,
               usage={"model": "m", "input_tokens": 3, "output_tokens": 4, "cost_usd": 0.5}, self_fields={"why": "x"})
    path = log.write_jsonl(tmp_path / "e.jsonl")
    for line in path.read_text().splitlines():
        assert validate_instance("episode_log_line", json.loads(line)) == [], line
    header, (record,) = read_log(path)
    assert header["format"] == 2 and header["ports"]["n"]["outputs"] == {"a": "Any"}
    huge = record["outputs"]["huge"]["$array"]
    assert huge["omitted"] and huge["max"] == 0.0 and huge["shape"] == [300_000]
    assert record["outputs"]["things"]["$array"]["items"] == [{"a": 1}, None]
    assert (record["model"], record["input_tokens"], record["cost_usd"], record["self"]) == ("m", 3, 0.5, {"why": "x"})


@pytest.mark.parametrize("pad", [0, INLINE_CHARS], ids=["ports written as one text", "values encoded one by one"])
def test_memo_never_shows_a_value_changed_in_place(pad):
    filler = {"pad": "p" * pad}  # (a second port making the inputs and outputs larger than INLINE_CHARS)
    log = EpisodeLog()
    fb = {"actions": ["left"]}
    log.firing("sim", "S", 0, None, {"feedback": fb, **filler}, 0.0)
    log.firing("pose", "P", 0, {"feedback": fb, **filler}, {}, 0.0)
    # the simulator's next action in the same tick changes its feedback in place
    fb["actions"].append("forward")
    log.firing("sim", "S", 0, {"action": "forward", **filler}, {"other": [1]}, 0.0)
    log.firing("pose", "P", 1, {"feedback": fb, **filler}, {}, 0.0)
    assert log.records[1]["inputs"]["feedback"] == {"actions": ["left"]}
    assert log.records[3]["inputs"]["feedback"] == {"actions": ["left", "forward"]}

    # a consumer reads last tick's map (delay edge) before its owner changes and re-emits it
    log = EpisodeLog()
    m = {"seen": 1}
    log.firing("planner", "P", 1, {"map": m, **filler}, {}, 0.0)
    m["seen"] = 2
    log.firing("memory", "M", 1, {}, {"map": m, **filler}, 0.0)
    log.firing("act", "A", 1, {"map": m, **filler}, {}, 0.0)
    assert [r["inputs"].get("map") or r["outputs"].get("map") for r in log.records] == \
        [{"seen": 1}, {"seen": 2}, {"seen": 2}]

    log.forget()
    m["seen"] = 3
    log.firing("act2", "A", 1, {"map": m, **filler}, {}, 0.0)
    assert log.records[-1]["inputs"]["map"] == {"seen": 3}

    # an array inside a value: its reference is reused only while the memo's window holds
    log = EpisodeLog()
    image = np.zeros(3, dtype=np.uint8)
    log.firing("sim", "S", 0, None, {"observation": {"image": image}, **filler}, 0.0)
    log.firing("perceive", "P", 0, {"observation": {"image": image}, **filler}, {}, 0.0)
    image[0] = 7  # the simulator's next step writes into the same array
    log.firing("sim", "S", 0, {"action": "forward"}, {"other": [1]}, 0.0)
    log.firing("perceive", "P", 1, {"observation": {"image": image}, **filler}, {}, 0.0)
    seen = [array_of(log.records[i]["inputs"]["observation"]["image"]).tolist() for i in (1, 3)]
    assert seen == [[0, 0, 0], [7, 0, 0]]


def test_small_ports_are_one_text_and_long_values_of_large_ones_stored_once(tmp_path):
    caption = "c" * (SHARED_CHARS + 20)  # longer than SHARED_CHARS, in ports shorter than INLINE_CHARS
    prompt = "p" * INLINE_CHARS
    log = EpisodeLog()
    for tick in range(3):
        log.firing("captioner", "C", tick, {"tick": tick}, {"caption": caption}, 0.0)
        log.firing("llm", "L", tick, {"caption": caption, "prompt": prompt}, {"reply": "ok"}, 0.0)
    lines = log.write_jsonl(tmp_path / "log.jsonl").read_text().splitlines()
    values = [json.loads(x)["value"] for x in lines if json.loads(x)["kind"] == "value"]
    assert values == [caption, prompt]  # each once, from the llm's large inputs
    captioner = [x for x in lines if '"node":"captioner"' in x]
    assert len(captioner) == 3 and all(f'"outputs":{{"caption":"{caption}"}}' in x for x in captioner)
    for record in read_log(tmp_path / "log.jsonl")[1]:
        assert record["outputs"].get("caption", caption) == caption == record["inputs"].get("caption", caption)


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


def test_logged_values_follow_values_changed_between_ticks(tmp_path):
    g = corridor_graph()
    g["nodes"]["tally"] = {"type": "test.LogTally", "config": {}}
    g["nodes"]["sink"] = {"type": "test.LogSink", "config": {}}
    g["edges"] += [{"from": "sim.position", "to": "tally.position"}, {"from": "tally.tally", "to": "sink.value"}]
    log = EpisodeLog()
    with GraphRunner(g, registry=REG) as runner:
        runner.run_episode({"seed": 0}, log)
        first = [r["inputs"]["value"] for r in log.records if r["node"] == "sink"]
        assert first == [{"pos": p} for p in range(4)]
        runner.run_episode({"seed": 1}, log)  # the same log and node objects again
    sinks = [r["inputs"]["value"] for r in log.records if r["node"] == "sink"]
    assert sinks == first * 2
    _, written = read_log(log.write_jsonl(tmp_path / "log.jsonl"))
    assert [x["inputs"]["value"] for x in written if x["node"] == "sink"] == sinks


def test_logged_values_follow_cells_changed_by_another_node():
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
    assert readers == [[], [0], [0, 1], [0, 1, 2]]  # read before the tick's append
    assert sinks == [[0], [0, 1], [0, 1, 2], [0, 1, 2, 3]]  # after it


# -- against an eager snapshot of every value, taken when the node fired -------------

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


def test_logged_values_equal_an_eager_snapshot_and_arrays_are_complete():
    fast, eager = EpisodeLog(), EagerLog(reference)  # (the plain rule: no encoding shared with the log)
    with GraphRunner(_painted_graph(), registry=REG) as runner:
        runner.run_episode({"seed": 0}, fast)
        runner.run_episode({"seed": 0}, eager)
    assert len(fast.records) == len(eager.records) > 10
    assert [(r["node"], r["tick"], r["inputs"], r["outputs"]) for r in fast.records] == eager.records
    painter = next(r for r in fast.records if r["node"] == "painter" and r["tick"] == 2)
    assert array_of(painter["outputs"]["view"]["image"]).tolist() == [[0, 2, 4], [6, 8, 10]]
    assert painter["outputs"]["pair"] == [2, None] and painter["outputs"]["label"] == "at 2"
    assert fast.ports["painter"] == {"type": "test.LogPainter",
                                     "outputs": {"canvas": "Any", "view": "Any", "label": "Text", "pair": "Any"}}


@node_type("test.LogHistory", registry=REG, inputs={"position": "Int"}, outputs={"history": "Any"})
class LogHistory(Node):
    """Emits the one list it keeps, appended to at every firing after the one that emitted it."""

    def reset(self, ctx):
        self.history = []

    def step(self, inputs, ctx):
        self.history.append(inputs["position"])
        return {"history": self.history}


def test_a_list_changed_by_its_node_after_it_emitted_it_is_logged_as_emitted(tmp_path):
    g = corridor_graph()
    g["nodes"]["history"] = {"type": "test.LogHistory", "config": {}}
    g["edges"].append({"from": "sim.position", "to": "history.position"})
    log = EpisodeLog()
    with GraphRunner(g, registry=REG) as runner:
        runner.run_episode({"seed": 0}, log)
    _, written = read_log(log.write_jsonl(tmp_path / "log.jsonl"))
    emitted = [x["outputs"]["history"] for x in written if x["node"] == "history"]
    assert emitted == [[0], [0, 1], [0, 1, 2], [0, 1, 2, 3]]


@node_type("test.LogKeeper", registry=REG, inputs={"position": "Int", "after": {"type": "Any", "required": False}},
           outputs={"counts": "Any", "seen": "Any"})
class LogKeeper(Node):
    """Emits the one array and the one dict it keeps, changed in place at every firing."""

    def reset(self, ctx):
        self.counts, self.seen = np.zeros(4, dtype=np.int16), {"n": 0}

    def step(self, inputs, ctx):
        self.counts[inputs["position"] % 4] += 1
        self.seen["n"] += 1
        return {"counts": self.counts, "seen": self.seen}


@node_type("test.LogRecaller", registry=REG, inputs={"counts": {"type": "Any", "required": False},
                                                     "seen": {"type": "Any", "required": False}},
           outputs={"cue": "Int"})
class LogRecaller(Node):
    def step(self, inputs, ctx):
        return {"cue": 1}


def test_a_value_read_over_a_delayed_edge_before_its_node_changes_it_is_logged_as_read():
    """The recaller fires first (the keeper needs its cue) and reads what the keeper emitted last
    tick; the keeper then changes those values in place."""
    g = corridor_graph()
    g["nodes"].update({"keeper": {"type": "test.LogKeeper", "config": {}},
                       "recaller": {"type": "test.LogRecaller", "config": {}}})
    g["edges"] += [{"from": "sim.position", "to": "keeper.position"}, {"from": "recaller.cue", "to": "keeper.after"},
                   {"from": "keeper.counts", "to": "recaller.counts", "delay": 1},
                   {"from": "keeper.seen", "to": "recaller.seen", "delay": 1}]
    with GraphRunner(g, registry=REG) as runner:
        assert runner.order.index("recaller") < runner.order.index("keeper")
        deferred, eager = deferred_and_eager(runner, {"seed": 0})
    recalled = [inputs for node, _, inputs, _ in deferred if node == "recaller" and inputs]
    assert [r["seen"] for r in recalled] == [{"n": n} for n in range(1, len(recalled) + 1)]
    assert deferred == eager


_TRAIL_CORRIDOR = {"inputs": {"action": "ActionChunk"},
                   "outputs": {"position": "Int", "goal": {"type": "Int", "privileged": True}, "mission": "Text",
                               "trail": "Any"},
                   "config_schema": {"type": "object", "properties": {"length": {"type": "integer", "default": 5}}}}


@node_type("test.LogTrailCorridor", registry=REG, **_TRAIL_CORRIDOR)
class LogTrailCorridor(canvas_corridor.Corridor):
    """The corridor, also emitting the one list of positions it keeps (appended to at every step)."""

    fresh_outputs = False

    def reset_episode(self, episode, ctx):
        self.trail = []
        return super().reset_episode(episode, ctx)

    def _obs(self):
        self.trail.append(self.pos)
        return {**super()._obs(), "trail": self.trail}


@node_type("test.LogTrailCorridorClaimingFresh", registry=REG, **_TRAIL_CORRIDOR)
class LogTrailCorridorClaimingFresh(LogTrailCorridor):
    fresh_outputs = True  # (wrongly: its trail changes after it returned it)


@pytest.mark.parametrize("sim_type", ["test.LogTrailCorridor", "test.LogTrailCorridorClaimingFresh"])
def test_a_simulator_changing_what_it_returned_is_logged_as_it_returned_it_unless_it_claims_fresh_outputs(
        tmp_path, sim_type):
    g = corridor_graph()
    g["nodes"]["sim"]["type"] = sim_type
    g["nodes"]["policy"] = {"type": "test.Chunker", "config": {"size": 3}}  # three steps a tick
    g["nodes"]["sink"] = {"type": "test.LogSink", "config": {}}
    g["edges"][1] = {"from": "policy.actions", "to": "sim.action"}
    g["edges"].append({"from": "sim.trail", "to": "sink.value"})
    log = EpisodeLog()
    with GraphRunner(g, registry=REG) as runner:
        assert runner.run_episode({"seed": 0}, log)["steps"] == 4
    _, written = read_log(log.write_jsonl(tmp_path / "log.jsonl"))
    trails = [x["outputs"]["trail"] for x in written if x["node"] == "sim"]
    received = [x["inputs"]["value"] for x in written if x["node"] == "sink"]
    if sim_type == "test.LogTrailCorridor":  # each step's outputs encoded before the next step
        assert trails == [[0], [0, 1], [0, 1, 2], [0, 1, 2, 3], [0, 1, 2, 3, 4]]
        assert received == [[0], [0, 1, 2, 3]]
    else:  # deferred to the next tick's start: the claim is what keeps the log exact
        assert trails == [[0], [0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3, 4]]


def test_deferred_firings_are_encoded_in_firing_order_by_flush_firing_records_and_write(tmp_path):
    log = EpisodeLog()
    plan = ["left"]
    log.defer("a", "A", 0, {}, {"plan": plan}, 0.0)
    plan.append("forward")  # before the flush: a deferred value is encoded as it is then
    log.firing("b", "B", 0, {"plan": plan}, {}, 0.0)  # encoded at once, after the deferred one
    plan.append("done")
    assert [(r["node"], r["outputs"].get("plan") or r["inputs"].get("plan")) for r in log.records] == \
        [("a", ["left", "forward"]), ("b", ["left", "forward"])]
    log.defer("c", "C", 1, {"plan": plan}, {}, 0.0)
    assert [r["node"] for r in log.records] == ["a", "b", "c"]  # records flushes
    log.defer("d", "D", 1, {}, {}, 0.0)
    _, written = read_log(log.write_jsonl(tmp_path / "log.jsonl"))
    assert [x["node"] for x in written] == ["a", "b", "c", "d"]
    assert written[2]["inputs"]["plan"] == ["left", "forward", "done"]
    quiet = EpisodeLog(enabled=False)
    quiet.defer("a", "A", 0, {}, {}, 0.0)
    quiet.flush()
    assert quiet.records == []


def test_non_ascii_text_is_written_as_utf8_and_line_breaking_characters_escaped(tmp_path):
    texts = ["caf\u00e9 \u2014 na\u00efve", "split\u2028here", "and\u0085here", "para\u2029graph"]
    log = EpisodeLog()
    log.firing("n", "T", 0, None, {"text": [t for t in texts]}, 0.0)
    data = log.write_jsonl(tmp_path / "log.jsonl").read_bytes()
    assert data.count(b"\n") == 2 and "\u2028".encode() not in data and "\u0085".encode() not in data
    assert read_log(tmp_path / "log.jsonl")[1][0]["outputs"]["text"] == texts
    log = EpisodeLog()
    log.firing("n", "T", 0, None, {"text": [texts[0]]}, 0.0)
    assert texts[0].encode() in log.write_jsonl(tmp_path / "plain.jsonl").read_bytes()


def test_a_process_killed_mid_episode_leaves_no_partial_log(tmp_path):
    """The log is written whole when the episode ends (temporary file, then rename): a
    worker killed before then leaves the previous complete log and no other."""
    import signal
    import subprocess
    import sys

    script = f"""
import os, signal
from harness.canvas.episode_log import EpisodeLog
log = EpisodeLog()
log.firing("sim", "S", 0, None, {{"position": 0}}, 0.0)
log.write_jsonl({str(tmp_path / "done.jsonl")!r})
log = EpisodeLog()
for tick in range(1000):
    log.firing("sim", "S", tick, None, {{"position": list(range(50))}}, 0.0)
    if tick == 500:
        os.kill(os.getpid(), signal.SIGKILL)
log.write_jsonl({str(tmp_path / "killed.jsonl")!r})
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["done.jsonl"]
    assert [r["outputs"] for r in read_log(tmp_path / "done.jsonl")[1]] == [{"position": 0}]


def test_a_log_is_freed_with_its_last_reference_and_durations_are_finite_numbers(tmp_path):
    """No reference cycle keeps a finished log (and the port values its memo holds) alive
    until the garbage collector runs; a duration that is not a positive finite number is 0."""
    import gc
    import weakref

    gc.disable()
    try:
        log = EpisodeLog()
        for tick, seconds in enumerate([0.25, math.nan, math.inf, -1.0, 1e-9]):
            log.firing("n", "T", tick, None, {"value": None, "image": np.zeros((2, 2))}, seconds)
        written = read_log(log.write_jsonl(tmp_path / "log.jsonl"))[1]
        held = weakref.ref(log)
        del log
        assert held() is None
    finally:
        gc.enable()
    assert [r["duration_s"] for r in written] == [0.25, 0.0, 0.0, 0.0, 0.0]


def test_large_arrays_changed_in_few_places_are_written_as_changes_and_read_back_whole(tmp_path):
    from harness.schemas import validate_instance

    rng = np.random.default_rng(3)
    grid = np.zeros((64, 64, 3), dtype=np.uint8)
    heights = rng.random((32, 32))
    emitted = []
    log = EpisodeLog()
    for tick in range(8):
        grid[rng.integers(0, 64), rng.integers(0, 64)] = rng.integers(1, 9, 3)  # a map updated in place
        heights[tick, :4] += 1.0
        if tick == 5:
            grid[:] = rng.integers(0, 9, grid.shape)  # changed everywhere: written in full
        log.firing("map", "T", tick, None, {"grid": grid, "heights": heights, "small": grid[:2, :2]}, 0.0)
        emitted.append((grid.copy(), heights.copy(), grid[:2, :2].copy()))
    path = log.write_jsonl(tmp_path / "log.jsonl")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    arrays = [line for line in lines if line["kind"] == "array"]
    changed = [line for line in arrays if "from" in line]
    assert all(validate_instance("episode_log_line", line) == [] for line in lines)
    assert changed and all(line["shape"] != [2, 2, 3] for line in changed)  # (small arrays always in full)
    both = dict(changed[0], base64=next(line["base64"] for line in arrays if "base64" in line))
    assert validate_instance("episode_log_line", both)  # (an array line is in full or changes, not both)
    assert validate_instance("episode_log_line", {k: v for k, v in changed[0].items() if k != "at"})
    assert {line["from"] for line in changed} < {line["id"] for line in arrays}
    assert sum(1 for line in arrays if line["shape"] == [64, 64, 3] and "base64" in line) == 2  # the first, tick 5
    for record, (g, h, small) in zip(read_log(path)[1], emitted):
        out = record["outputs"]
        assert np.array_equal(array_of(out["grid"]), g) and np.array_equal(array_of(out["heights"]), h)
        assert np.array_equal(array_of(out["small"]), small)
    assert log.records == read_log(path)[1]

    broken = [dict(line, **{"from": 999}) if "from" in line else line for line in lines]
    (tmp_path / "broken.jsonl").write_text("".join(json.dumps(line) + "\n" for line in broken))
    with pytest.raises(UserError, match=r"broken.jsonl:\d+: array \d+ changes array 999"):
        read_log(tmp_path / "broken.jsonl")


def test_ports_too_long_for_one_text_then_short_again_are_one_text_again(tmp_path):
    cells = [{"fwd": i, "right": -i, "code": [2, 5, 0]} for i in range(40)]  # longer than INLINE_CHARS
    caption = "d" * (SHARED_CHARS + 20)
    outputs = [{"cells": cells, "word": "caf\u00e9"}, {"word": "caf\u00e9", "caption": caption},
               {"word": "caf\u00e9"}, {"cells": cells}, {"word": "na\u00efve", "n": 3}, {"word": "na\u00efve"}]
    log = EpisodeLog()
    for tick, out in enumerate(outputs):
        log.firing("perceive", "P", tick, {"tick": tick}, out, 0.0)
    lines = log.write_jsonl(tmp_path / "log.jsonl").read_bytes().splitlines()
    assert [r["outputs"] for r in read_log(tmp_path / "log.jsonl")[1]] == outputs
    firings = [line for line in lines if b'"kind":"firing"' in line]
    # after ports too long for one text, each value is encoded on its own (text escaped); once such a
    # text without shared values is short again, the next ports are one text again (UTF-8)
    assert [b"caf\\u00e9" in f for f in firings[:3]] == [True, True, True]
    assert b"na\\u00efve" in firings[4] and '"outputs":{"word":"na\u00efve"}'.encode() in firings[5]

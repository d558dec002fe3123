"""One episode as the viewer and the executors' renderers see it: per tick the
simulator's outputs, each node firing's inputs and outputs, the actions,
read through the episode-log reader (`harness.evaluation.trace.read_log`).

The reader gives each port as it was logged. In a log that stores values as
data (header `"format": 2`) they are taken as they are, an array (`{"$array":
{dtype, shape, base64}}`) becoming a numpy array. In a log of bounded text
summaries (the first format) a text that is a Python literal becomes that
value, an array the log line carries in full (its `arrays` field: dtype,
shape, base64 of the bytes, keyed by JSON pointer) becomes a numpy array at its
place, and a dict summary the log cut keeps its complete leading entries
(`leading_entries`), so a renderer can read a simulator state's first fields.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from harness.evaluation.trace import array_of, read_log, simulator_nodes

SUMMARY_CHARS = 200  # the first format's bound on a port's summary


@dataclass
class Firing:
    node: str
    type: str | None
    inputs: dict | None     # as logged (the viewer shows these texts)
    outputs: dict | None
    values: dict            # "inputs" / "outputs" -> {port: value} (literals and arrays read back)
    error: str | None = None
    self_fields: dict | None = None
    usage: dict | None = None


@dataclass
class Tick:
    tick: int
    # what the simulator showed the agent at this tick (values): its reset outputs at tick 0, after
    # that the outputs of its last step in the tick before
    observation: dict = field(default_factory=dict)
    actions: list = field(default_factory=list)      # the actions the simulator executed at this tick (values)
    firings: list[Firing] = field(default_factory=list)  # every firing of the tick, the simulator's included


@dataclass
class EpisodeData:
    episode: dict                 # the episode as run (its keys, budgets)
    result: dict | None           # what the simulator reported at the end
    ticks: list[Tick]

    def actions_before(self, index: int) -> list:
        """Every action executed before the tick at `index` of `ticks`, in order."""
        return [a for t in self.ticks[:index] for a in t.actions]


def load_episode(log: Path) -> EpisodeData:
    header, firings = read_log(log)
    return episode_from(header, firings)


def episode_from(header: dict, firings: list[dict]) -> EpisodeData:
    sims = simulator_nodes(firings)
    as_data = (header.get("format") or 1) >= 2
    ticks: dict[int, Tick] = {}
    shown: dict = {}  # the simulator's latest outputs
    for record in firings:
        tick = ticks.get(record["tick"])
        if tick is None:
            tick = ticks[record["tick"]] = Tick(record["tick"], observation=shown)
        arrays = record.get("arrays") or {}
        values = {side: arrays_read(record.get(side) or {}) if as_data else _values(record.get(side), arrays, side)
                  for side in ("inputs", "outputs")}
        usage = {k: record[k] for k in ("model", "input_tokens", "output_tokens", "cost_usd") if k in record}
        tick.firings.append(Firing(record["node"], record.get("type"), record.get("inputs"), record.get("outputs"),
                                   values, record.get("error"), record.get("self"), usage or None))
        if record["node"] in sims:
            if record.get("inputs"):
                tick.actions.append(values["inputs"].get("actions"))
            elif not tick.observation:
                tick.observation = values["outputs"]
            shown = values["outputs"]
    return EpisodeData(header.get("episode") or {}, header.get("result"), [ticks[k] for k in sorted(ticks)])


def value(logged):
    """A logged port back as a value: a literal's value, the complete leading
    entries of a dict summary the log cut (at SUMMARY_CHARS, ending in "..."),
    else the text itself. A value the reader already returns as one stays."""
    if not isinstance(logged, str):
        return logged
    try:
        return ast.literal_eval(logged)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        pass
    cut = logged.startswith("{") and logged.endswith("...") and len(logged) <= SUMMARY_CHARS
    return leading_entries(logged) if cut else logged


def leading_entries(text: str) -> dict | str:
    """The longest prefix of a cut dict summary that reads as a dict of
    literals (`{'a': 1, 'b': 'x', 'c': [1, 2` -> {'a': 1, 'b': 'x'}); else `text`."""
    cut = len(text)
    while True:
        cut = text.rfind(", '", 0, cut)
        if cut <= 0:
            return text
        try:
            found = ast.literal_eval(text[:cut] + "}")
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            continue
        if isinstance(found, dict):
            return found


def _values(ports: dict | None, arrays: dict, side: str) -> dict:
    out = {port: value(text) for port, text in (ports or {}).items()}
    prefix = side + "/"
    for where, record in arrays.items():
        if where.startswith(prefix):
            array = decode_array(record)
            if array is not None:
                _put(out, [_unescape(p) for p in where[len(prefix):].split("/")], array)
    return out


def arrays_read(value):
    """A value of a format-2 log with each `{"$array": record}` as a numpy array (left as it is when
    its content was not logged)."""
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get("$array"), dict):
            array = decode_array(value["$array"])
            return value if array is None else array
        return {k: arrays_read(v) for k, v in value.items()}
    if isinstance(value, list):
        return [arrays_read(v) for v in value]
    return value


def decode_array(record: dict):
    """An array's logged record (dtype, shape, base64 or items) as a numpy array (None when its
    content was not logged)."""
    return array_of({"$array": record})


def _put(root: dict, parts: list[str], array) -> None:
    """Set `array` at the JSON-pointer parts under root, making dicts on the way
    where the logged summary did not read back as a container."""
    node = root
    for k, part in enumerate(parts[:-1]):
        child = node.get(part) if isinstance(node, dict) else _index(node, part)
        if not isinstance(child, (dict, list)):
            child = {}
            if isinstance(node, dict):
                node[part] = child
            else:
                return
        node = child
    last = parts[-1]
    if isinstance(node, dict):
        node[last] = array
    elif isinstance(node, list) and last.isdigit() and int(last) < len(node):
        node[int(last)] = array


def _index(seq, part: str):
    return seq[int(part)] if part.isdigit() and int(part) < len(seq) else None


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")

"""The one reader of episode logs: an episode's firings with every value
resolved, a readable trace of it, the point where two candidates' traces of
the same episode diverge, and the executor's view of its state at one tick (by
deterministic replay of the episode from its seed).

Values come back as the log holds them (`harness.canvas.episode_log`): JSON
data, with `{"$value": N}` and `{"$array": N}` references replaced by what
they refer to (an array as `{"$array": {"dtype", "shape", "base64"}}`, see
`array_of`); objects that are not data stay tagged (`$object`, `$float`,
`$set`, `$bytes`, `$dict`). Logs of the first format (bounded text summaries)
read as they are.

Firings are aligned by (tick, node, k-th firing of that node in the tick):
walking the child's firings in order, the first one whose logged outputs
differ from the parent's (or that the parent does not have) is the divergence
point. Until then every upstream value was identical, so for two graphs that
differ in one node it is that node's first firing with a changed output.
Values are compared as logged: an object by what it names, never where it is
in memory.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

from harness.errors import UserError

MOTION_TYPES = ("Motion", "List[Motion]")  # output port types whose latest value each tick's view carries


def read_log(path: Path) -> tuple[dict, list[dict]]:
    """(episode header, firings) of an episode log, every value resolved."""
    if not path.is_file():
        raise UserError(f"{path}: no episode log (evaluate with an output folder to keep logs)")
    from harness.fileio import read_text

    return parse_lines(read_text(path, "episode log").splitlines(), str(path))


def parse_lines(lines: list[str], where: str) -> tuple[dict, list[dict]]:
    """(header, firings) from a log's lines, references resolved; `where` names the log in errors."""
    header: dict = {}
    firings, arrays, values = [], {}, {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}:{number}: malformed JSON line: {exc.msg}") from None
        except (ValueError, RecursionError) as exc:  # huge integers, absurd nesting
            raise UserError(f"{where}:{number}: unreadable JSON line ({type(exc).__name__})") from None
        if not isinstance(record, dict):
            raise UserError(f"{where}:{number}: a log line must be a JSON object")
        kind = record.get("kind")
        if kind == "episode":
            header = record
        elif kind == "firing":
            firings.append(record)
        elif kind == "array":
            arrays[record.get("id")] = {k: v for k, v in record.items() if k not in ("kind", "id")}
        elif kind == "value":
            values[record.get("id")] = record.get("value")
    if arrays or values:
        resolve = _Resolver(arrays, values, where)
        for f in firings:
            for field in ("inputs", "outputs", "self"):
                if isinstance(f.get(field), dict):
                    f[field] = resolve(f[field])
    return header, firings


class _Resolver:
    """Replaces references by their content; a value shared by many firings is resolved once."""

    def __init__(self, arrays: dict, values: dict, where: str):
        self.arrays, self.values, self.where = arrays, values, where
        self.done: dict[int, Any] = {}

    def __call__(self, v: Any) -> Any:
        if isinstance(v, dict):
            if len(v) == 1:
                if "$value" in v:
                    return self._value(v["$value"])
                if "$array" in v and not isinstance(v["$array"], dict):
                    if v["$array"] not in self.arrays:
                        raise UserError(f"{self.where}: array {v['$array']!r} is referenced but not in the log")
                    return {"$array": self.arrays[v["$array"]]}
            return {k: self(x) for k, x in v.items()}
        if isinstance(v, list):
            return [self(x) for x in v]
        return v

    def _value(self, vid: Any) -> Any:
        if vid not in self.done:
            if vid not in self.values:
                raise UserError(f"{self.where}: value {vid!r} is referenced but not in the log")
            self.done[vid] = None  # (a value cannot refer to itself: the writer never makes one that does)
            self.done[vid] = self(self.values[vid])
        return self.done[vid]


def array_of(value: dict):
    """A resolved `{"$array": record}` as a numpy array (None when its content was not logged)."""
    import numpy as np

    record = value["$array"]
    if "base64" in record:
        return np.frombuffer(base64.b64decode(record["base64"]), record["dtype"]).reshape(record["shape"])
    if "items" in record:
        return np.array(record["items"], dtype=object).reshape(record["shape"])
    return None


def _keyed(firings: list[dict]) -> list[tuple[tuple, dict]]:
    seen: dict[tuple, int] = {}
    out = []
    for f in firings:
        base = (f["tick"], f["node"])
        seen[base] = seen.get(base, -1) + 1
        out.append(((*base, seen[base]), f))
    return out


def simulator_nodes(firings: list[dict]) -> set[str]:
    """Nodes that fire at tick 0 without inputs: the simulator(s)."""
    return {f["node"] for f in firings if f["tick"] == 0 and f.get("inputs") is None}


def actions_by_tick(firings: list[dict]) -> dict[int, list]:
    """The actions fed to the simulator per tick, as logged."""
    sims = simulator_nodes(firings)
    out: dict[int, list] = {}
    for f in firings:
        if f["node"] in sims and f.get("inputs"):
            out.setdefault(f["tick"], []).append(f["inputs"].get("actions"))
    return out


def ticks(firings: list[dict], only: int | None = None, ports: dict | None = None) -> list[dict]:
    """Per tick: the simulator's outputs the agent saw (`observation`), each
    node's outputs, the actions, and (given the header's `ports`) the current
    motion: the latest value of an output port typed Motion or List[Motion]
    (`{"from": "node.port", "tick": t, "value": ...}`), or None."""
    sims = simulator_nodes(firings)
    motion_ports = {(node, port) for node, spec in (ports or {}).items()
                    for port, type_ in (spec.get("outputs") or {}).items() if type_ in MOTION_TYPES}
    out: dict[int, dict] = {}
    seen = motion = None
    for f in firings:
        tick = f["tick"]
        if f["node"] in sims and not f.get("inputs"):  # a reset: what tick 0 sees
            seen = f.get("outputs")
        t = out.get(tick)
        if t is None and (only is None or tick == only):
            t = out[tick] = {"tick": tick, "observation": seen, "motion": motion, "nodes": [], "actions": []}
        if f["node"] in sims:
            if f.get("inputs"):
                if t is not None:
                    t["actions"].append(f["inputs"].get("actions"))
                seen = f.get("outputs")  # what the next tick sees
            continue
        for port, value in (f.get("outputs") or {}).items():
            if (f["node"], port) in motion_ports:
                motion = {"from": f"{f['node']}.{port}", "tick": tick, "value": value}
        if t is None:
            continue
        if motion is not None and motion["tick"] == tick:
            t["motion"] = motion
        node = {"node": f["node"], "type": f.get("type"), "outputs": f.get("outputs")}
        if f.get("error"):
            node["error"] = f["error"]
        if f.get("self"):
            node["self"] = f["self"]
        t["nodes"].append(node)
    if only is not None and not out:
        last = max((f["tick"] for f in firings), default=-1)
        raise UserError(f"--tick {only}: the episode has ticks 0..{last}")
    return [out[k] for k in sorted(out)]


def divergence(parent: list[dict], child: list[dict]) -> dict | None:
    """The first firing where the child's trace departs from the parent's, and
    the first tick whose actions differ (None: identical traces)."""
    theirs = dict(_keyed(parent))
    first = None
    for key, f in _keyed(child):
        other = theirs.get(key)
        if other is None or other.get("outputs") != f.get("outputs") or other.get("error") != f.get("error"):
            first = {"tick": key[0], "node": f["node"], "type": f.get("type"), "firing": key[2],
                     "parent_outputs": None if other is None else other.get("outputs"),
                     "child_outputs": f.get("outputs"),
                     "why": "node does not fire in the parent" if other is None else "outputs differ"}
            break
    if first is None and len(parent) != len(child):
        extra = parent[len(child)]
        first = {"tick": extra["tick"], "node": extra["node"], "type": extra.get("type"), "firing": 0,
                 "parent_outputs": extra.get("outputs"), "child_outputs": None,
                 "why": "the child's episode ends here"}
    if first is None:
        return None
    a, b = actions_by_tick(parent), actions_by_tick(child)
    action_tick = next((t for t in sorted(set(a) | set(b)) if a.get(t) != b.get(t)), None)
    return dict(first, first_action_tick=action_tick,
                parent_actions=a.get(action_tick) if action_tick is not None else None,
                child_actions=b.get(action_tick) if action_tick is not None else None)


# --------------------------------------------------------------------------- replay and renderers


def state_renderer(executor: str):
    """The renderer the executor declares (`ExecutorSpec.state_renderer`), or
    None: `render(episode, tick, captured, actions) -> str`, where `captured`
    maps each node that fired at `tick` to its raw {"type", "inputs",
    "outputs"} and `actions` lists what the simulator executed before `tick`."""
    from harness.executor_api import find_executor, load_ref

    ref = find_executor(executor).state_renderer
    return load_ref(ref) if ref else None


class _Capture:
    """An episode log that keeps the raw port values of one tick (copied: a
    node may update its own outputs in place later) and every action."""

    enabled = True

    def __init__(self, tick: int):
        self.tick = tick
        self.nodes: dict[str, dict] = {}
        self.actions: list = []
        self.simulators: set[str] = set()
        self.episode = self.result = None

    def forget(self) -> None:
        pass

    def firing(self, node, node_type, tick, inputs, outputs, duration_s, error=None, usage=None, self_fields=None):
        if tick == 0 and inputs is None:
            self.simulators.add(node)
        elif node in self.simulators and inputs and tick < self.tick:
            self.actions.append(copy.deepcopy(inputs.get("actions")))
        if tick == self.tick and node not in self.nodes:
            self.nodes[node] = {"type": node_type, "inputs": copy.deepcopy(inputs), "outputs": copy.deepcopy(outputs)}


def replay_view(graph: dict, candidate_dir: Path, episode: dict, tick: int, logged_actions: dict[int, list],
                executor: str) -> dict:
    """Re-run the episode in-process and render the executor's view at `tick`.
    Says so when the replay's actions depart from the log (a non-deterministic agent)."""
    renderer = state_renderer(executor)
    if renderer is None:
        return {"rendered": None, "note": f"executor {executor!r} provides no state renderer"}
    from harness.canvas.registry import for_graph
    from harness.canvas.runtime import GraphRunner
    from harness.evaluation.runners import make_model_client

    capture = _Capture(tick)
    runner = GraphRunner(graph, candidate_dir=candidate_dir, registry=for_graph(graph, candidate_dir),
                         model_client=make_model_client(graph, candidate_dir))
    try:
        runner.run_episode(episode, capture)
    finally:
        runner.close()
    from harness.canvas.episode_log import logged_value

    logged = [a for t in sorted(logged_actions) if t < tick for a in logged_actions[t]]
    note = None
    if logged != [logged_value(a) for a in capture.actions]:
        note = "the replay's actions differ from the log (the agent is not deterministic): the view shows the replay"
    return {"rendered": renderer(episode, tick, capture.nodes, capture.actions), "note": note}


# --------------------------------------------------------------------------- the human view of values

BRIEF_CHARS = 160  # a value in the human view is cut at this many characters


def brief(value: Any, limit: int = BRIEF_CHARS) -> str:
    """A resolved value as short text for people: floats to 3 decimals, arrays by
    dtype and shape, tagged objects by what they are; cut at `limit` characters
    with "…" (the caller says that values were shortened)."""
    text = _brief(value, 0)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _brief(v: Any, depth: int) -> str:
    if isinstance(v, float):
        if abs(v) >= 1e6:
            return f"{v:.3g}"
        text = f"{v:.3f}".rstrip("0").rstrip(".")
        return "0" if text == "-0" else text
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_brief(x, depth + 1) for x in v[:64]) + (", …]" if len(v) > 64 else "]")
    if isinstance(v, dict):
        if len(v) == 1 and "$array" in v and isinstance(v["$array"], dict):
            a = v["$array"]
            return f"<array {a.get('dtype')} {'×'.join(map(str, a.get('shape', [])))}>"
        if "$object" in v:
            inner = _brief(v["value"], depth + 1) if "value" in v else v.get("repr", "")
            return f"{v['$object']}({inner})" if "value" in v else inner
        if len(v) == 1:
            (tag, inner), = v.items()
            if tag in ("$float", "$bytes"):
                return str(inner) if tag == "$float" else f"<{len(inner) * 3 // 4} bytes>"
            if tag == "$set":
                return "{" + ", ".join(_brief(x, depth + 1) for x in inner) + "}"
        items = list(v.items())
        text = ", ".join(f"{k}: {_brief(x, depth + 1)}" for k, x in items[:64])
        return "{" + text + (", …}" if len(items) > 64 else "}")
    return json.dumps(v)

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

import copy
import json
from pathlib import Path
from typing import Any

from harness.canvas.log_reader import array_of, parse_lines, read_log  # noqa: F401  (the one reader; re-exported)
from harness.errors import UserError

MOTION_TYPES = ("Motion", "List[Motion]")  # output port types whose latest value each tick's view carries


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

    def defer(self, node, node_type, tick, inputs, outputs, duration_s, error=None, usage=None, self_fields=None):
        """What the runner calls at each firing: copied here, at once."""
        if tick == 0 and inputs is None:
            self.simulators.add(node)
        elif node in self.simulators and inputs and tick < self.tick:
            self.actions.append(copy.deepcopy(inputs.get("actions")))
        if tick == self.tick and node not in self.nodes:
            self.nodes[node] = {"type": node_type, "inputs": copy.deepcopy(inputs), "outputs": copy.deepcopy(outputs)}

    flush = forget


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

def array_shapes(value: Any) -> Any:
    """A resolved value with each array's bytes left out: `{"$array": {"dtype", "shape"}}`."""
    if isinstance(value, dict):
        record = value.get("$array") if len(value) == 1 else None
        if isinstance(record, dict):
            return {"$array": {k: v for k, v in record.items() if k != "base64"}}
        return {k: array_shapes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [array_shapes(v) for v in value]
    return value


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

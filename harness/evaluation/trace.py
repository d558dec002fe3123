"""A readable trace of one episode from its JSONL log, the point where two
candidates' traces of the same episode diverge, and the executor's view of its
state at one tick (by deterministic replay of the episode from its seed).

Firings are aligned by (tick, node, k-th firing of that node in the tick):
walking the child's firings in order, the first one whose outputs differ from
the parent's (or that the parent does not have) is the divergence point. Until
then every upstream value was identical, so for two graphs that differ in one
node it is that node's first firing with a changed output.
"""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path

from harness.errors import UserError


def read_log(path: Path) -> tuple[dict, list[dict]]:
    """(episode header, firings) of an episode log."""
    if not path.is_file():
        raise UserError(f"{path}: no episode log (evaluate with an output folder to keep logs)")
    header: dict = {}
    firings = []
    from harness.fileio import read_text

    for number, line in enumerate(read_text(path, "episode log").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{number}: malformed JSON line: {exc.msg}") from None
        except (ValueError, RecursionError) as exc:  # huge integers, absurd nesting
            raise UserError(f"{path}:{number}: unreadable JSON line ({type(exc).__name__})") from None
        if not isinstance(record, dict):
            raise UserError(f"{path}:{number}: a log line must be a JSON object")
        if record.get("kind") == "episode":
            header = record
        elif record.get("kind") == "firing":
            firings.append(record)
    return header, firings


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
            out.setdefault(f["tick"], []).append(_value(f["inputs"].get("actions")))
    return out


def _value(text):
    """A logged port summary back as a Python value when it is a literal."""
    if not isinstance(text, str):
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def ticks(firings: list[dict], only: int | None = None) -> list[dict]:
    """Per tick: what the simulator showed, each node's outputs, the actions."""
    sims = simulator_nodes(firings)
    out: dict[int, dict] = {}
    for f in firings:
        if only is not None and f["tick"] != only:
            continue
        t = out.setdefault(f["tick"], {"tick": f["tick"], "observation": None, "nodes": [], "actions": []})
        if f["node"] in sims:
            if f.get("inputs"):
                t["actions"].append(f["inputs"].get("actions"))
            elif t["observation"] is None:
                t["observation"] = f.get("outputs")
            continue
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
    logged = [_value(a) for t in sorted(logged_actions) if t < tick for a in logged_actions[t]]
    replayed = [a if isinstance(a, (str, int)) else _value(repr(a)) for a in capture.actions]
    note = None
    if [repr(a) for a in logged] != [repr(a) for a in replayed]:
        note = "the replay's actions differ from the log (the agent is not deterministic): the view shows the replay"
    return {"rendered": renderer(episode, tick, capture.nodes, capture.actions), "note": note}

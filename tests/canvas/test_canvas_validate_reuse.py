"""Validation that reuses parts found valid before (schema entries, node
configs, the wiring) reports exactly what a full validation reports, over a
long random walk of patches: each step's graph is validated both ways."""

from __future__ import annotations

import copy
import random

from canvas_corridor import REG, corridor_graph

from harness.canvas.patch import PatchError, apply_patch
from harness.canvas.validate import validate_graph

TYPES = ["test.Forward", "test.Chunker", "test.Cheater", "test.Counter", "test.Text", "core.Passthrough",
         "core.Constant", "test.Nope", "composite"]
CONFIG_VALUES = [0, 1, 2.5, -1, "visits", "other", None, True, [1], {"a": 1}]
CONFIG_KEYS = ["size", "length", "cell", "value", "at_tick", "bogus"]


def _endpoints(graph: dict, rng: random.Random) -> str:
    nid = rng.choice(list(graph.get("nodes") or {"x": 0}) + ["ghost"])
    return f"{nid}.{rng.choice(['position', 'action', 'actions', 'goal', 'mission', 'count', 'value', 'text', 'i', 'o', 'nope'])}"


def _random_op(graph: dict, rng: random.Random) -> dict:
    nodes = list(graph.get("nodes") or {})
    r = rng.random()
    if r < 0.2 and "sim" in nodes:  # what a proposer mostly does: retune a value
        return {"op": "set_config", "node": "sim", "pointer": "/length", "value": rng.randint(1, 9)}
    if r < 0.3 and nodes:
        return {"op": "set_config", "node": rng.choice(nodes), "pointer": "/" + rng.choice(CONFIG_KEYS),
                "value": rng.choice(CONFIG_VALUES)}
    if r < 0.45:
        return {"op": "add_edge", "from": _endpoints(graph, rng), "to": _endpoints(graph, rng),
                **({"delay": 1} if rng.random() < 0.2 else {})}
    if r < 0.55 and graph.get("edges"):
        e = rng.choice(graph["edges"])
        if isinstance(e, dict):
            return {"op": "remove_edge", "from": e.get("from"), "to": e.get("to")}
    if r < 0.65:
        return {"op": "add_node", "id": f"n{rng.randint(0, 30)}", "type": rng.choice(TYPES),
                "config": rng.choice([{}, {"composite": "c"}, {"cell": "visits"}])}
    if r < 0.72 and nodes:
        return {"op": "remove_node", "id": rng.choice(nodes)}
    if r < 0.8 and nodes:
        return {"op": "retype_node", "id": rng.choice(nodes), "type": rng.choice(TYPES)}
    if r < 0.87 and nodes:
        return {"op": "set_grant", "node": rng.choice(nodes), "write": rng.choice([[], ["visits"], ["ghost"]])}
    if r < 0.93:
        return {"op": "set_budget", "budgets": {"max_steps": rng.choice([None, 5, 50])}}
    return {"op": "json_patch", "patch": [{"op": "add", "path": "/edges/-", "value": rng.choice(
        [{"from": "sim.position", "to": "policy.position"}, {"from": 3, "to": "x"}, "junk"])}]}


def _base() -> dict:
    g = corridor_graph()
    g["state"] = {"visits": {"type": "Int", "reducer": "add", "lifetime": "episode"}}
    g["composites"] = {"c": {"nodes": {"p": {"type": "core.Passthrough", "config": {}}},
                             "edges": [], "inputs": {"i": "p.value"}, "outputs": {"o": "p.value"}}}
    return g


def _report(graph: dict, reuse: bool) -> list[dict]:
    return [p.to_dict() for p in validate_graph(copy.deepcopy(graph), registry=REG, reuse=reuse)]


def test_reusing_validation_equals_full_validation_on_random_patches():
    rng = random.Random(2024)
    graph = _base()
    history = [graph]
    reused_clean = 0
    for _ in range(1000):
        try:
            graph = apply_patch(graph, {"ops": [_random_op(graph, rng) for _ in range(rng.randint(1, 3))]})
        except PatchError:
            graph = rng.choice(history)  # jump back: revisits let earlier results be reused
            continue
        history.append(graph)
        full = _report(graph, reuse=False)
        assert _report(graph, reuse=True) == full, graph
        reused_clean += not full
        if rng.random() < 0.1:
            graph = _base()
    # the walk also passes through problem-free graphs, where reuse is most used
    assert reused_clean >= 10

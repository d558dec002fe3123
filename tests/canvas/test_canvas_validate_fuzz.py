"""validate_graph never raises, whatever shape a (parseable) graph has."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

from canvas_corridor import REG, corridor_graph

from harness.canvas.validate import Problem, validate_graph

GRAPHS = Path(__file__).resolve().parents[1] / "graphs"
JUNK = [None, 0, -1, 1.5, "", "x", "a.b", "sim.position", [], [1], {}, {"type": "core.Constant"}, True,
        {"from": "x", "to": 3}, ["visits"], {"read": "visits"}, "composite", {"composite": "nope"}]


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _set(obj, path, value):
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


def _bases():
    g = corridor_graph()
    g["state"] = {"visits": {"type": "Int", "reducer": "add", "lifetime": "episode"}}
    g["grants"] = {"policy": {"read": ["visits"], "write": ["visits"]}}
    g["nodes"]["box"] = {"type": "composite", "config": {"composite": "c"}}
    g["composites"] = {"c": {"nodes": {"p": {"type": "core.Passthrough", "config": {}}},
                             "edges": [], "inputs": {"i": "p.value"}, "outputs": {"o": "p.value"}}}
    g["edges"].append({"from": "sim.position", "to": "box.i"})
    yield g
    for name in ("faulty_many.json", "valid_state_composite.json"):
        yield json.loads((GRAPHS / name).read_text())


def test_random_corruptions_never_crash_the_validator():
    rng = random.Random(1234)
    for base in _bases():
        paths = [p for p in _paths(base) if p]
        for _ in range(300):
            g = copy.deepcopy(base)
            for _ in range(rng.randint(1, 3)):
                path = rng.choice(paths)
                try:
                    _set(g, path, copy.deepcopy(rng.choice(JUNK)))
                except (KeyError, IndexError, TypeError):
                    continue
            problems = validate_graph(g, registry=REG)
            assert isinstance(problems, list) and all(isinstance(p, Problem) for p in problems)



def _corrupt(base, rng):
    paths = [p for p in _paths(base) if p]
    g = copy.deepcopy(base)
    for _ in range(rng.randint(0, 3)):
        try:
            _set(g, rng.choice(paths), copy.deepcopy(rng.choice(JUNK)))
        except (KeyError, IndexError, TypeError):
            continue
    return g


def test_diff_round_trips_even_between_malformed_graphs():
    from harness.canvas import PatchError, apply_patch, diff_graphs

    rng = random.Random(99)
    bases = list(_bases())
    ops = [{"op": "remove_node", "id": "policy"}, {"op": "remove_state", "cell": "visits"},
           {"op": "unwrap", "id": "box"}, {"op": "wrap", "id": "w", "composite": "cc", "nodes": ["policy"]},
           {"op": "set_grant", "id": "policy", "read": ["a"]},
           {"op": "remove_edge", "from": "sim.position", "to": "policy.position"}]
    for _ in range(300):
        a, b = _corrupt(rng.choice(bases), rng), _corrupt(rng.choice(bases), rng)
        assert apply_patch(a, diff_graphs(a, b)) == b
        before = copy.deepcopy(a)
        try:
            apply_patch(a, {"ops": [rng.choice(ops)]})
        except PatchError:
            pass
        assert a == before

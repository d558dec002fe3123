"""apply_patch's edge index gives the same graph as applying the ops one at a
time (where every op starts from a plain edge list), on random op sequences
that mix edge ops with node removals and RFC 6902 ops reading /edges."""

from __future__ import annotations

import random

from canvas_corridor import corridor_graph

from harness.canvas.patch import PatchError, apply_patch


def _random_ops(rng: random.Random, graph: dict, n: int) -> list[dict]:
    nodes = list(graph["nodes"])
    ports = ["a.x", "b.y", "sim.position", "sim.action"]
    ops = []
    for i in range(n):
        r = rng.random()
        if r < 0.35:
            ops.append({"op": "add_edge", "from": rng.choice(ports), "to": rng.choice(ports)})
        elif r < 0.6:
            ops.append({"op": "remove_edge", "from": rng.choice(ports), "to": rng.choice(ports)})
        elif r < 0.7:
            nid = f"n{i}"
            nodes.append(nid)
            ops.append({"op": "add_node", "id": nid, "type": "core.Passthrough"})
            ports += [f"{nid}.value"]
        elif r < 0.8 and nodes:
            ops.append({"op": "remove_node", "id": rng.choice(nodes)})
        elif r < 0.9:
            ops.append({"op": "json_patch", "patch": [{"op": "add", "path": "/edges/-",
                                                       "value": {"from": rng.choice(ports), "to": "a.x"}}]})
        else:
            ops.append({"op": "set_budget", "budgets": {"max_steps": i + 1}})
    return ops


def _one_at_a_time(graph: dict, ops: list[dict]):
    for i, op in enumerate(ops):
        try:
            graph = apply_patch(graph, {"ops": [op]})
        except PatchError as exc:
            return ("error", i, exc.reason)
    return graph


def test_indexed_edges_equal_op_by_op_application():
    rng = random.Random(3)
    errors = 0
    for _ in range(300):
        graph = corridor_graph()
        ops = _random_ops(rng, graph, rng.randint(1, 25))
        expected = _one_at_a_time(graph, ops)
        try:
            got = apply_patch(graph, {"ops": ops})
        except PatchError as exc:
            got = ("error", exc.index, exc.reason)
            errors += 1
        assert got == expected, ops
    assert 0 < errors < 300  # both outcomes were exercised


def test_a_graph_without_edges_gains_none_from_node_removal():
    graph = corridor_graph()
    del graph["edges"]
    out = apply_patch(graph, {"ops": [{"op": "remove_node", "id": next(iter(graph["nodes"]))}]})
    assert "edges" not in out

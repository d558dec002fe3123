"""Behaviour equivalence: what can reach the simulator counts, ids and dead nodes do not."""

import copy
import json
from pathlib import Path

from harness.canvas.equivalence import compare, live_graph
from harness.canvas.patch import apply_patch

SEED = json.loads((Path(__file__).parents[2] / "seeds" / "babyai" / "graph.json").read_text())


def _same(a: dict, b: dict) -> bool:
    return compare(live_graph(a, {"sim"}), live_graph(b, {"sim"})).same


def test_a_change_inside_a_composite_is_a_change():
    wrapped = apply_patch(SEED, {"ops": [{"op": "wrap", "id": "nav", "composite": "navc",
                                          "nodes": ["explore", "commit"]}]})
    tuned = copy.deepcopy(wrapped)
    tuned["composites"]["navc"]["nodes"]["explore"]["config"]["length"] = 3
    assert _same(wrapped, copy.deepcopy(wrapped)) and not _same(wrapped, tuned)


def test_a_node_reaching_the_loop_only_through_a_state_cell_is_live():
    cell = {"type": "Int", "reducer": "replace", "lifetime": "episode"}
    base = apply_patch(SEED, {"ops": [
        {"op": "add_state", "cell": "hint", "spec": cell},
        {"op": "add_node", "id": "writer", "type": "core.Constant", "config": {"value": 1}},
        {"op": "set_grant", "id": "writer", "write": ["hint"]},
        {"op": "set_grant", "id": "act", "read": ["hint"]}]})
    assert "writer" not in live_graph(SEED, {"sim"}).graph and "writer" in live_graph(base, {"sim"}).graph
    changed = apply_patch(base, {"ops": [{"op": "set_config", "id": "writer", "pointer": "/value", "value": 2}]})
    assert not _same(base, changed)
    unread = apply_patch(base, {"ops": [{"op": "set_grant", "id": "act", "read": []}]})
    assert "writer" in live_graph(unread, {"sim"}).dead

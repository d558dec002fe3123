"""Structured patches: every op, atomicity, errors naming the op, diff round-trips."""

from __future__ import annotations

import copy
import json
import random

import pytest
from canvas_corridor import REG, corridor_graph

from harness.canvas import GraphRunner, PatchError, apply_patch, diff_graphs, flatten, validate_graph


def test_add_remove_retype_node_and_edges():
    g = corridor_graph()
    out = apply_patch(g, {"ops": [
        {"op": "add_node", "id": "relay", "type": "core.Passthrough"},
        {"op": "remove_edge", "from": "policy.action", "to": "sim.action"},
        {"op": "add_edge", "from": "policy.action", "to": "relay.value"},
        {"op": "add_edge", "from": "relay.value", "to": "sim.action"},
        {"op": "retype_node", "id": "policy", "type": "test.Chunker", "config": {"size": 2}},
    ]})
    assert out["nodes"]["relay"] == {"type": "core.Passthrough", "config": {}}
    assert out["nodes"]["policy"] == {"type": "test.Chunker", "config": {"size": 2}}
    assert {"from": "relay.value", "to": "sim.action"} in out["edges"]
    assert g == corridor_graph()  # input untouched


def test_remove_node_cascades_edges_and_grant():
    g = corridor_graph(grants={"policy": {"read": []}}, state={})
    out = apply_patch(g, {"ops": [{"op": "remove_node", "id": "policy"}]})
    assert "policy" not in out["nodes"] and out["edges"] == [] and "policy" not in out["grants"]


def test_set_config_pointer_and_whole():
    g = corridor_graph()
    out = apply_patch(g, {"ops": [{"op": "set_config", "id": "sim", "pointer": "/length", "value": 9},
                                  {"op": "set_config", "id": "policy", "pointer": "", "value": {"step": 1}}]})
    assert out["nodes"]["sim"]["config"] == {"length": 9} and out["nodes"]["policy"]["config"] == {"step": 1}
    with pytest.raises(PatchError) as info:
        apply_patch(g, {"ops": [{"op": "set_config", "id": "sim", "pointer": "/a/b", "value": 1}]})
    assert info.value.index == 0 and "pointer '/a/b'" in info.value.reason


def test_state_grants_budgets_termination():
    g = corridor_graph()
    out = apply_patch(g, {"ops": [
        {"op": "add_state", "cell": "visits", "spec": {"type": "Int", "reducer": "add", "lifetime": "episode"}},
        {"op": "set_grant", "id": "policy", "read": ["visits"], "write": ["visits"]},
        {"op": "set_budget", "budgets": {"max_steps": 9, "wall_seconds": None}},
        {"op": "set_termination", "termination": {"max_ticks": 3}},
    ]})
    assert out["grants"] == {"policy": {"read": ["visits"], "write": ["visits"]}}
    assert out["budgets"] == {"max_steps": 9} and out["termination"] == {"max_ticks": 3}
    back = apply_patch(out, {"ops": [{"op": "remove_state", "cell": "visits"}]})
    assert back["state"] == {} and back["grants"] == {"policy": {"read": [], "write": []}}
    cleared = apply_patch(out, {"ops": [{"op": "set_grant", "id": "policy", "read": [], "write": []}]})
    assert cleared["grants"] == {}


def test_rewire_edge_moves_one_end_and_keeps_its_delay():
    g = apply_patch(corridor_graph(), {"ops": [{"op": "add_node", "id": "relay", "type": "core.Passthrough"},
                                               {"op": "add_edge", "from": "sim.position", "to": "relay.value",
                                                "delay": 1}]})
    out = apply_patch(g, {"ops": [{"op": "rewire_edge", "from": "sim.position", "to": "relay.value",
                                   "new_from": "policy.action"}]})
    assert {"from": "policy.action", "to": "relay.value", "delay": 1} in out["edges"]
    assert not any(e == {"from": "sim.position", "to": "relay.value", "delay": 1} for e in out["edges"])
    assert len(out["edges"]) == len(g["edges"])
    undelayed = apply_patch(out, {"ops": [{"op": "rewire_edge", "from": "policy.action", "to": "relay.value",
                                           "new_from": "sim.position", "delay": 0}]})
    assert {"from": "sim.position", "to": "relay.value"} in undelayed["edges"]
    with pytest.raises(PatchError, match="already exists"):
        apply_patch(g, {"ops": [{"op": "rewire_edge", "from": "sim.position", "to": "relay.value",
                                 "new_to": "policy.position"}]})


def test_modify_state_changes_a_cell_in_place_and_keeps_its_grants():
    g = apply_patch(corridor_graph(), {"ops": [
        {"op": "add_state", "cell": "visits", "spec": {"type": "Int", "reducer": "add", "lifetime": "episode"}},
        {"op": "set_grant", "id": "policy", "read": ["visits"], "write": ["visits"]}]})
    out = apply_patch(g, {"ops": [{"op": "modify_state", "cell": "visits", "reducer": "max", "lifetime": "run"}]})
    assert out["state"]["visits"] == {"type": "Int", "reducer": "max", "lifetime": "run"}
    assert out["grants"] == g["grants"]


def test_wrap_and_unwrap_round_trip_and_run_the_same():
    g = corridor_graph()
    g["nodes"]["relay"] = {"type": "core.Passthrough", "config": {}}
    g["edges"] = [{"from": "sim.position", "to": "policy.position"}, {"from": "policy.action", "to": "relay.value"},
                  {"from": "relay.value", "to": "sim.action"}]
    wrapped = apply_patch(g, {"ops": [{"op": "wrap", "id": "brain", "composite": "controller",
                                       "nodes": ["policy", "relay"]}]})
    assert set(wrapped["nodes"]) == {"sim", "brain"}
    assert wrapped["composites"]["controller"]["inputs"] == {"policy_position": "policy.position"}
    assert wrapped["composites"]["controller"]["outputs"] == {"relay_value": "relay.value"}
    assert validate_graph(wrapped, registry=REG) == []
    assert sorted(flatten(wrapped)["nodes"]) == ["brain/policy", "brain/relay", "sim"]
    with GraphRunner(wrapped, registry=REG) as r:
        assert r.run_episode({"seed": 0})["success"]
    unwrapped = apply_patch(wrapped, {"ops": [{"op": "unwrap", "id": "brain"}]})
    assert unwrapped["nodes"] == g["nodes"]
    assert sorted(map(json.dumps, unwrapped["edges"])) == sorted(map(json.dumps, g["edges"]))
    assert "composites" not in unwrapped


def test_json_patch_op_and_bare_rfc6902_list():
    g = corridor_graph()
    out = apply_patch(g, [{"op": "replace", "path": "/name", "value": "renamed"}])
    assert out["name"] == "renamed"
    out = apply_patch(g, {"ops": [{"op": "json_patch", "patch": [{"op": "add", "path": "/description", "value": "d"}]}]})
    assert out["description"] == "d"


@pytest.mark.parametrize("patch,index,op,reason", [
    ({"ops": [{"op": "add_node", "id": "x", "type": "core.Passthrough"},
              {"op": "remove_edge", "from": "a.b", "to": "c.d"}]}, 1, "remove_edge", "no edge a.b -> c.d"),
    ({"ops": [{"op": "add_node", "id": "x", "type": "core.Passthrough"},
              {"op": "add_node", "id": "x", "type": "core.Passthrough"}]}, 1, "add_node", "already exists"),
    ({"ops": [{"op": "set_budget", "budgets": {"max_steps": 1}},
              {"op": "remove_node", "id": "ghost"}]}, 1, "remove_node", "no node 'ghost'"),
    ({"ops": [{"op": "set_budget", "budgets": {"max_steps": 1}},
              {"op": "json_patch", "patch": [{"op": "test", "path": "/name", "value": "other"}]}]}, 1, "json_patch",
     "test"),
    ({"ops": [{"op": "add_edge", "from": "sim.position"}]}, 0, "add_edge", "'to' is a required property"),
    ({"ops": [{"op": "frobnicate"}]}, 0, "frobnicate", "is not one of"),
    ({"ops": [{"op": "add_edge", "from": "sim.position", "to": "policy.position", "delay": 1},
              {"op": "add_state", "cell": "c", "spec": {"type": "Int"}}]}, 1, "add_state",
     "'reducer' is a required property"),
    ({"ops": [{"op": "unwrap", "id": "sim"}]}, 0, "unwrap", "not a composite"),
    ({"ops": [{"op": "rewire_edge", "from": "sim.position", "to": "ghost.value", "new_to": "policy.position"}]}, 0,
     "rewire_edge", "no edge sim.position -> ghost.value"),
    ({"ops": [{"op": "rewire_edge", "from": "policy.action", "to": "sim.action", "new_from": "sim.position",
               "new_to": "policy.position"}]}, 0, "rewire_edge", "exactly one of new_from"),
    ({"ops": [{"op": "rewire_edge", "from": "policy.action", "to": "sim.action"}]}, 0, "rewire_edge",
     "exactly one of new_from"),
    ({"ops": [{"op": "modify_state", "cell": "ghost", "reducer": "max"}]}, 0, "modify_state", "no state cell 'ghost'"),
    ({"ops": [{"op": "modify_state", "cell": "ghost"}]}, 0, "modify_state", "nothing to change"),
    ({"ops": [{"op": "modify_state", "cell": "c", "lifetime": "forever"}]}, 0, "modify_state", "is not one of"),
    ({"ops": [{"op": "wrap", "id": "w", "composite": "c", "nodes": ["ghost"]}]}, 0, "wrap", "no node 'ghost'"),
])
def test_failing_patch_names_the_op_and_leaves_graph_untouched(patch, index, op, reason):
    g = corridor_graph()
    before = copy.deepcopy(g)
    with pytest.raises(PatchError) as info:
        apply_patch(g, patch)
    err = info.value
    assert (err.index, err.op) == (index, op) and reason in err.reason
    assert f"op #{index} ({op})" in err.message
    assert g == before


def test_malformed_patch_documents():
    for bad in ({"op": "add_node"}, {"ops": "nope"}, {"ops": [], "extra": 1}, 42):
        with pytest.raises(PatchError) as info:
            apply_patch(corridor_graph(), bad)
        assert info.value.index is None
    with pytest.raises(PatchError) as info:
        apply_patch(corridor_graph(), [{"op": "add", "path": "/a", "value": 1}, {"op": "jump"}])
    assert info.value.index == 1


def _mutate(g: dict, rng: random.Random) -> dict:
    """A random structured edit (sometimes several)."""
    g = copy.deepcopy(g)
    for _ in range(rng.randint(1, 4)):
        choice = rng.randrange(11)
        nodes = list(g["nodes"])
        if choice == 0:
            nid = f"n{rng.randrange(1000)}"
            g["nodes"][nid] = {"type": "core.Passthrough", "config": {}}
        elif choice == 1 and len(nodes) > 1:
            victim = rng.choice(nodes)
            g = apply_patch(g, {"ops": [{"op": "remove_node", "id": victim}]})
        elif choice == 2 and nodes:
            g["nodes"][rng.choice(nodes)]["config"] = {"k": rng.randrange(5)}
        elif choice == 3 and nodes:
            g["edges"].append({"from": f"{rng.choice(nodes)}.value", "to": f"{rng.choice(nodes)}.value"})
        elif choice == 4 and g["edges"]:
            g["edges"].pop(rng.randrange(len(g["edges"])))
        elif choice == 5:
            g.setdefault("state", {})[f"c{rng.randrange(3)}"] = {"type": "Int", "reducer": "add", "lifetime": "run"}
        elif choice == 6 and nodes:
            g.setdefault("grants", {})[rng.choice(nodes)] = {"read": [f"c{rng.randrange(3)}"]}
        elif choice == 7:
            g["budgets"] = {"max_steps": rng.randrange(1, 9)} if rng.random() < 0.5 else {"wall_seconds": 3}
        elif choice == 8 and g["edges"]:
            rng.shuffle(g["edges"])
            g["edges"][0]["delay"] = 1
        elif choice == 9 and g.get("state"):
            cell = rng.choice(list(g["state"]))
            g["state"][cell] = dict(g["state"][cell], reducer=rng.choice(["max", "min", "replace"]))
        elif choice == 10 and g["edges"] and nodes:
            edge = g["edges"][rng.randrange(len(g["edges"]))]
            edge[rng.choice(["from", "to"])] = f"{rng.choice(nodes)}.value"
    return g


def test_diff_round_trips_on_random_edits():
    rng = random.Random(7)
    base = corridor_graph()
    for _ in range(150):
        a = _mutate(base, rng)
        b = _mutate(a, rng)
        patch = diff_graphs(a, b)
        assert apply_patch(a, patch) == b
        assert diff_graphs(a, a) == {"ops": []}


def test_diff_prefers_structured_ops():
    a = corridor_graph()
    b = apply_patch(a, {"ops": [
        {"op": "add_node", "id": "relay", "type": "core.Passthrough"},
        {"op": "add_edge", "from": "relay.value", "to": "policy.position"},
        {"op": "set_config", "id": "sim", "pointer": "/length", "value": 7},
        {"op": "set_budget", "budgets": {"max_steps": 5}},
    ]})
    ops = diff_graphs(a, b)["ops"]
    assert [o["op"] for o in ops] == ["set_config", "add_node", "add_edge", "set_budget"]
    assert apply_patch(a, {"ops": ops}) == b
    c = apply_patch(b, {"ops": [{"op": "rewire_edge", "from": "relay.value", "to": "policy.position",
                                 "new_to": "relay.value"},
                                {"op": "add_state", "cell": "n", "spec": {"type": "Int", "reducer": "add",
                                                                         "lifetime": "run"}}]})
    d = apply_patch(c, {"ops": [{"op": "modify_state", "cell": "n", "lifetime": "episode"}]})
    assert [o["op"] for o in diff_graphs(b, c)["ops"]][0] == "rewire_edge"
    assert diff_graphs(c, d)["ops"] == [{"op": "modify_state", "cell": "n", "lifetime": "episode"}]


def test_failing_rfc6902_op_is_named_inside_the_json_patch():
    g = corridor_graph()
    with pytest.raises(PatchError) as info:
        apply_patch(g, [{"op": "add", "path": "/description", "value": "x"},
                        {"op": "remove", "path": "/nodes/ghost"}])
    assert info.value.index == 0 and info.value.op == "json_patch"
    assert info.value.reason.startswith("RFC 6902 op #1 (remove /nodes/ghost)")
    assert g == corridor_graph()

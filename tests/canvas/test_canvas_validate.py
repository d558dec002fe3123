"""validate_graph: each problem code, with its location; many faults at once."""

from __future__ import annotations

import copy

import pytest
from canvas_corridor import REG, corridor_graph

from harness.canvas.registry import Node, Registry, default_registry, node_type
from harness.canvas.validate import CODES, validate_graph
from harness.schemas import validate_instance


def problems(graph, **kw):
    return validate_graph(graph, registry=kw.pop("registry", REG), **kw)


def codes(graph, **kw):
    return sorted(p.code for p in problems(graph, **kw))


def find(ps, code, **where):
    hits = [p for p in ps if p.code == code and all(getattr(p, k) == v for k, v in where.items())]
    assert hits, f"no {code} problem at {where}; got {[p.to_dict() for p in ps]}"
    return hits[0]


def test_valid_graph_has_no_problems_and_problem_dicts_match_schema():
    assert problems(corridor_graph()) == []
    bad = corridor_graph()
    del bad["budgets"]
    ps = problems(bad)
    assert ps and all(validate_instance("problem", p.to_dict()) == [] for p in ps)
    assert {p.code for p in ps} <= set(CODES)


def test_not_an_object():
    assert [p.code for p in validate_graph([1, 2])] == ["schema"]


def test_unknown_type_with_suggestion():
    g = corridor_graph()
    g["nodes"]["policy"]["type"] = "test.Forwrd"
    p = find(problems(g), "unknown_type", node="policy", path="/nodes/policy/type")
    assert "test.Forward" in p.hint
    # edges touching the unknown node are not reported again
    assert codes(g) == ["unknown_type"]


def test_unknown_node_unknown_port_missing_port():
    g = corridor_graph()
    g["edges"] += [{"from": "ghost.x", "to": "policy.position"},
                   {"from": "sim.positon", "to": "policy.position"},
                   {"from": "sim.position", "to": "policy.action"}]
    ps = problems(g)
    find(ps, "unknown_node", node="ghost", path="/edges/2/from")
    p = find(ps, "unknown_port", node="sim", port="positon", path="/edges/3/from")
    assert "position" in p.hint
    p = find(ps, "unknown_port", node="policy", port="action", path="/edges/4/to")
    assert "is an output" in p.hint
    g2 = corridor_graph()
    g2["edges"].append({"from": "sim", "to": "policy.position"})  # schema error + missing_port
    ps = problems(g2)
    find(ps, "missing_port", node="sim", path="/edges/2/from")
    find(ps, "schema", path="/edges/2/from")


def test_type_mismatch_and_generics():
    g = corridor_graph()
    g["nodes"]["text"] = {"type": "test.Text", "config": {}}
    g["edges"].append({"from": "sim.position", "to": "text.text"})
    p = find(problems(g), "type_mismatch", node="text", port="text", path="/edges/2")
    assert "Int" in p.message and "Text" in p.message


def test_type_variables_bind_per_node_and_propagate():
    g = corridor_graph()
    g["nodes"].update({"sel": {"type": "core.Select", "config": {}},
                       "pass": {"type": "core.Passthrough", "config": {}},
                       "text": {"type": "test.Text", "config": {}}})
    g["edges"] += [{"from": "sim.position", "to": "sel.first"},
                   {"from": "sim.mission", "to": "sel.second"}]
    find(problems(g), "type_mismatch", node="sel", port="second")
    # T bound to Int on pass -> its output is Int, which cannot feed a Text input
    g = corridor_graph()
    g["nodes"].update({"pass": {"type": "core.Passthrough", "config": {}},
                       "text": {"type": "test.Text", "config": {}}})
    g["edges"] += [{"from": "sim.position", "to": "pass.value"}, {"from": "pass.value", "to": "text.text"}]
    p = find(problems(g), "type_mismatch", node="text", port="text")
    assert "pass.value (Int)" in p.message


def test_unconnected_required_input_suggests_sources():
    g = corridor_graph()
    g["edges"] = [{"from": "policy.action", "to": "sim.action"}]
    p = find(problems(g), "unconnected_input", node="policy", port="position", path="/nodes/policy")
    assert "sim.position" in p.hint and "sim.goal" not in p.hint  # never suggest privileged outputs


def test_cycle_needs_a_delay_or_the_simulator():
    g = corridor_graph()
    g["nodes"].update({"a": {"type": "core.Passthrough", "config": {}},
                       "b": {"type": "core.Select", "config": {}}})
    g["edges"] += [{"from": "sim.position", "to": "b.first"},
                   {"from": "b.value", "to": "a.value"},
                   {"from": "a.value", "to": "b.second"}]
    p = find(problems(g), "cycle")
    assert "'a'" in p.message and "'b'" in p.message and p.path in ("/edges/3", "/edges/4")
    g["edges"][-1]["delay"] = 1
    assert problems(g) == []
    # a self-loop without delay is a cycle too
    g2 = corridor_graph()
    g2["nodes"]["s"] = {"type": "core.Select", "config": {}}
    g2["edges"] += [{"from": "sim.position", "to": "s.first"}, {"from": "s.value", "to": "s.second"}]
    find(problems(g2), "cycle", node="s")


def test_loop_through_simulator_is_not_a_cycle():
    assert "cycle" not in codes(corridor_graph())


def state_graph():
    g = corridor_graph()
    g["nodes"]["count"] = {"type": "test.Counter", "config": {"cell": "visits"}}
    g["edges"].append({"from": "sim.position", "to": "count.position"})
    g["state"] = {"visits": {"type": "Int", "reducer": "add", "lifetime": "episode"}}
    g["grants"] = {"count": {"write": ["visits"]}}
    return g


def test_state_grants_and_cells():
    assert problems(state_graph()) == []
    g = state_graph()
    g["grants"] = {"count": {"read": ["visits"]}, "policy": {"read": ["nowhere"]}, "ghost": {"read": ["visits"]}}
    ps = problems(g)
    find(ps, "no_grant", node="count", cell="visits", path="/grants/count")
    find(ps, "unknown_cell", node="policy", cell="nowhere", path="/grants/policy/read/0")
    find(ps, "unknown_node", node="ghost", path="/grants/ghost")
    g = state_graph()
    g["nodes"]["count"]["config"]["cell"] = "elsewhere"
    find(problems(g), "unknown_cell", node="count", cell="elsewhere")


@pytest.mark.parametrize("reducer,ctype,ok", [
    ("replace", "Int", True), ("add", "Int", True), ("add", "Text", False), ("append", "List[Int]", True),
    ("append", "Int", False), ("merge", "Map", True), ("merge", "Dict[Text, Int]", True), ("merge", "List[Int]", False),
    ("extend", "Any", True), ("average", "Int", False),
])
def test_reducer_fits_cell_type(reducer, ctype, ok):
    g = corridor_graph(state={"c": {"type": ctype, "reducer": reducer, "lifetime": "run"}})
    ps = [p for p in problems(g) if p.code == "bad_reducer"]
    assert (not ps) == ok
    if ps:
        assert ps[0].cell == "c" and ps[0].path == "/state/c/reducer"


def test_bad_cell_type_syntax():
    g = corridor_graph(state={"c": {"type": "List[Int", "reducer": "replace", "lifetime": "run"}})
    find(problems(g), "bad_type", cell="c", path="/state/c/type")


def test_missing_budgets():
    g = corridor_graph()
    del g["budgets"]
    find(problems(g), "missing_budget", path="/budgets")
    g = corridor_graph(budgets={"max_steps": 5})
    p = find(problems(g), "missing_budget")
    assert "wall_seconds" in p.message


def test_model_nodes_need_profile_and_model_budgets():
    g = corridor_graph()
    g["nodes"]["policy"] = {"type": "test.Model", "config": {}}
    g["edges"][0] = {"from": "sim.mission", "to": "policy.mission"}
    ps = problems(g)
    find(ps, "model_profile", node="policy")
    assert sum(p.code == "missing_budget" for p in ps) == 2
    g["model_profile"] = {"name": "fake", "path": "profiles/fake.yaml"}
    g["budgets"].update(model_calls=10, tokens=1000)
    assert problems(g) == []
    find(problems(g, pinned_profile="claude"), "model_profile", path="/model_profile")
    g["nodes"]["policy"]["config"] = {"model": "gpt-x"}
    find(problems(g), "model_profile", node="policy", path="/nodes/policy/config/model")


def test_model_profile_path_must_exist_for_a_candidate(tmp_path):
    g = corridor_graph(model_profile={"name": "fake", "path": "prof.yaml"})
    find(problems(g, candidate_dir=tmp_path), "model_profile", path="/model_profile/path")
    (tmp_path / "prof.yaml").write_text("name: fake\n")
    assert problems(g, candidate_dir=tmp_path) == []


def test_privileged_leak_direct_and_indirect():
    g = corridor_graph()
    g["nodes"]["policy"] = {"type": "test.Cheater", "config": {}}
    g["edges"] = [{"from": "sim.goal", "to": "policy.goal"}, {"from": "sim.position", "to": "policy.position"},
                  {"from": "policy.action", "to": "sim.action"}]
    p = find(problems(g), "privileged_leak", node="policy", port="action", path="/edges/2")
    assert "sim.goal" in p.message
    # through a passthrough chain
    g2 = copy.deepcopy(g)
    g2["nodes"]["relay"] = {"type": "core.Passthrough", "config": {}}
    g2["edges"][0] = {"from": "sim.goal", "to": "relay.value"}
    g2["edges"].append({"from": "relay.value", "to": "policy.goal"})
    p = find(problems(g2), "privileged_leak")
    assert "relay" in p.message
    # privileged data used only off the action path is fine
    g3 = corridor_graph()
    g3["nodes"]["watch"] = {"type": "core.Passthrough", "config": {}}
    g3["edges"].append({"from": "sim.goal", "to": "watch.value"})
    assert problems(g3) == []


def test_privileged_leak_through_state_cell():
    g = corridor_graph()
    g["nodes"].update({"stash": {"type": "core.StateWrite", "config": {"cell": "secret"}},
                       "recall": {"type": "core.StateRead", "config": {"cell": "secret"}},
                       "sel": {"type": "core.Select", "config": {}}})
    g["edges"] = [{"from": "sim.goal", "to": "stash.value"}, {"from": "sim.position", "to": "policy.position"},
                  {"from": "recall.value", "to": "sel.first"}, {"from": "policy.action", "to": "sel.second"},
                  {"from": "sel.value", "to": "sim.action"}]
    g["state"] = {"secret": {"type": "Int", "reducer": "replace", "lifetime": "episode"}}
    g["grants"] = {"stash": {"write": ["secret"]}, "recall": {"read": ["secret"]}}
    p = find(problems(g), "privileged_leak", path="/edges/4")
    assert "state:secret" in p.message


def test_bad_config_reports_each_violation():
    g = corridor_graph()
    g["nodes"]["sim"]["config"] = {"length": 0, "colour": "red"}
    ps = [p for p in problems(g) if p.code == "bad_config"]
    assert {p.path for p in ps} == {"/nodes/sim/config", "/nodes/sim/config/length"}


def test_no_simulator_multiple_simulators_and_foreign_simulator():
    g = corridor_graph()
    del g["nodes"]["sim"]
    g["edges"] = []
    assert "no_simulator" in codes(g)
    g = corridor_graph()
    g["nodes"]["sim2"] = {"type": "test.Corridor", "config": {}}
    g["edges"].append({"from": "policy.action", "to": "sim2.action"})
    find(problems(g), "multiple_simulators", node="sim2")
    foreign = Registry(parent=REG)

    @node_type("other.World", registry=foreign, inputs={"action": "Action"}, outputs={"position": "Int"})
    class World(REG.get("test.Corridor").cls):
        pass

    g = corridor_graph()
    g["nodes"]["sim"]["type"] = "other.World"
    find(problems(g, registry=foreign), "no_simulator", node="sim", path="/nodes/sim/type")


def test_unknown_executor():
    g = corridor_graph(executor="no_such_executor")
    find(validate_graph(g), "unknown_executor", path="/executor")


def test_composites_report_inner_locations():
    g = corridor_graph()
    g["nodes"]["policy"] = {"type": "composite", "config": {"composite": "brain"}}
    g["edges"] = [{"from": "sim.position", "to": "policy.pos"}, {"from": "policy.act", "to": "sim.action"}]
    g["composites"] = {"brain": {
        "nodes": {"inner": {"type": "test.Forward", "config": {"step": "big"}},
                  "other": {"type": "test.Nope", "config": {}}},
        "edges": [{"from": "inner.action", "to": "other.x"}],
        "inputs": {"pos": "inner.position"},
        "outputs": {"act": "inner.action"}}}
    ps = problems(g)
    find(ps, "bad_config", node="policy/inner", path="/nodes/policy/inner/config/step".replace(
        "/nodes/policy/inner", "/composites/brain/nodes/inner"))
    find(ps, "unknown_type", node="policy/other", path="/composites/brain/nodes/other/type")
    g["edges"][0]["to"] = "policy.missing"
    g["composites"]["brain"]["nodes"]["inner"]["config"] = {}
    ps = problems(g)
    find(ps, "unknown_port", node="policy", port="missing", path="/edges/0")
    find(ps, "unconnected_input", node="policy/inner", port="position")


def test_unknown_and_recursive_composites():
    g = corridor_graph()
    g["nodes"]["box"] = {"type": "composite", "config": {"composite": "nowhere"}}
    find(problems(g), "unknown_composite", node="box", path="/nodes/box/config/composite")
    g["nodes"]["box"]["config"]["composite"] = "loop"
    g["composites"] = {"loop": {"nodes": {"again": {"type": "composite", "config": {"composite": "loop"}}}}}
    find(problems(g), "recursive_composite", node="box/again")


def test_schema_errors_do_not_hide_semantic_problems():
    g = corridor_graph()
    g["budgets"]["max_steps"] = "many"
    g["nodes"]["policy"]["type"] = "test.Forwrd"
    g["surprise"] = 1
    ps = problems(g)
    find(ps, "schema", path="/budgets/max_steps")
    find(ps, "schema", path="")
    find(ps, "unknown_type", node="policy")


def test_many_faults_at_once_are_all_reported():
    g = corridor_graph()
    g["nodes"].update({
        "typo": {"type": "test.Forwrd", "config": {}},
        "text": {"type": "test.Text", "config": {}},
        "count": {"type": "test.Counter", "config": {"cell": "visits"}},
        "cheat": {"type": "test.Cheater", "config": {}},
        "a": {"type": "core.Passthrough", "config": {}},
        "b": {"type": "core.Passthrough", "config": {}},
    })
    g["nodes"]["sim"]["config"]["length"] = -3
    g["edges"] += [
        {"from": "sim.position", "to": "text.text"},          # 2 type mismatch
        {"from": "sim.position", "to": "count.position"},     # 3 fine
        {"from": "sim.goal", "to": "cheat.goal"},             # 4 leak source
        {"from": "sim.position", "to": "cheat.position"},     # 5
        {"from": "cheat.action", "to": "sim.action"},         # 6 leak + duplicate target is fine
        {"from": "a.value", "to": "b.value"},                 # 7 cycle
        {"from": "b.value", "to": "a.value"},                 # 8 cycle
        {"from": "sim.position", "to": "policy.nope"},        # 9 unknown port
    ]
    g["state"] = {"visits": {"type": "Text", "reducer": "add", "lifetime": "episode"}}
    del g["budgets"]["wall_seconds"]
    ps = problems(g)
    find(ps, "unknown_type", node="typo")
    find(ps, "type_mismatch", node="text", port="text", path="/edges/2")
    find(ps, "no_grant", node="count", cell="visits")
    find(ps, "bad_reducer", cell="visits")
    find(ps, "privileged_leak", node="cheat", path="/edges/6")
    find(ps, "cycle")
    find(ps, "unknown_port", node="policy", port="nope", path="/edges/9/to")
    find(ps, "missing_budget")
    find(ps, "bad_config", node="sim", path="/nodes/sim/config/length")
    assert len({p.code for p in ps}) >= 9


def test_duplicate_edge_is_a_warning():
    g = corridor_graph()
    g["edges"].append(dict(g["edges"][0]))
    ps = problems(g)
    assert [(p.code, p.severity, p.path) for p in ps] == [("duplicate_edge", "warning", "/edges/2")]


def test_default_registry_is_not_polluted_by_test_types():
    assert default_registry().get("test.Corridor") is None
    assert isinstance(REG.get("core.Constant").cls, type) and issubclass(REG.get("core.Constant").cls, Node)


def test_type_mismatch_hint_names_converting_node_types():
    reg = Registry(parent=REG)

    @node_type("test.Length", registry=reg, inputs={"text": "Text"}, outputs={"n": "Int"})
    class Length(Node):
        pass

    g = corridor_graph()
    g["edges"][0] = {"from": "sim.mission", "to": "policy.position"}
    p = find(problems(g, registry=reg), "type_mismatch", node="policy", port="position", path="/edges/0")
    assert "test.Length (text -> n)" in p.hint
    assert "test.Length" not in find(problems(g), "type_mismatch").hint  # not registered there

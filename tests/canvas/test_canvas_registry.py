"""Registry: node_type declarations, executor import on demand, candidate nodesets."""

from __future__ import annotations


import pytest
from canvas_corridor import corridor_graph

from harness.canvas import GraphRunner, validate_graph
from harness.canvas.isolated import IsolatedNode
from harness.canvas.registry import Node, Registry, default_registry, for_graph, node_type
from harness.canvas.types import TypeSyntaxError


def test_node_type_declaration_and_defaults():
    reg = Registry()

    @node_type("x.Thing", registry=reg, inputs={"a": "Int", "b": {"type": "Text", "required": False}},
               outputs={"c": {"type": "Int", "privileged": True, "doc": "truth"}},
               config_schema={"type": "object", "properties": {"k": {"type": "integer", "default": 3}}},
               role="thing")
    class Thing(Node):
        """Does a thing.

        More text."""

    nt = reg.get("x.Thing")
    assert nt.cls is Thing and Thing.node_type is nt
    assert nt.inputs["a"].required and not nt.inputs["b"].required
    assert nt.outputs["c"].privileged and nt.doc == "Does a thing."
    assert Thing("n1", {}).config == {"k": 3} and Thing("n1", {"k": 5}).config == {"k": 5}
    d = nt.to_dict()
    assert d["outputs"]["c"] == {"type": "Int", "privileged": True, "doc": "truth"}
    assert d["inputs"]["b"] == {"type": "Text", "required": False}


def test_bad_declarations_fail_at_registration():
    reg = Registry()
    with pytest.raises(TypeSyntaxError):
        node_type("x.A", registry=reg, inputs={"a": "List[Int"})(type("A", (Node,), {}))
    with pytest.raises(TypeError):
        node_type("x.B", registry=reg)(object)
    node_type("x.C", registry=reg)(type("C", (Node,), {}))
    with pytest.raises(ValueError, match="already registered"):
        node_type("x.C", registry=reg)(type("C2", (Node,), {}))


def test_core_types_present_and_executor_imported_on_demand():
    reg = default_registry()
    assert {"core.Constant", "core.Passthrough", "core.Select", "core.Gate"} <= set(reg.names())
    nt = reg.get("babyai.Simulator")  # imports executors.babyai
    assert nt is not None and nt.is_simulator
    assert reg.ensure_executor("definitely_missing").startswith("unknown executor 'definitely_missing' (known: babyai")


NODESET = '''
from harness.canvas.registry import Node, node_type

@node_type("Doubler", inputs={"position": "Int"}, outputs={"action": "Action"}, role="routing",
           config_schema={"type": "object", "properties": {"step": {"type": "integer", "default": 1}}})
class Doubler(Node):
    """Steps forward by config.step."""
    def step(self, inputs, ctx):
        ctx.log(prompt=(ctx.candidate_dir / "prompt.txt").read_text().strip())
        return {"action": self.config["step"]}
'''


def test_candidate_nodeset_loads_under_candidate_namespace(tmp_path):
    from canvas_corridor import REG

    (tmp_path / "nodeset").mkdir()
    (tmp_path / "nodeset" / "mine.py").write_text(NODESET)
    (tmp_path / "prompt.txt").write_text("be brave\n")
    g = corridor_graph()
    g["nodes"]["policy"] = {"type": "candidate.Doubler", "config": {}}
    overlay = for_graph(g, tmp_path)
    assert overlay.get("candidate.Doubler") is not None
    assert default_registry().get("candidate.Doubler") is None  # never leaks
    assert for_graph(g, tmp_path) is overlay  # cached while the files are unchanged
    # the candidate's types resolve on top of a custom registry too
    cand = for_graph(g, tmp_path, base=REG)
    assert cand is not overlay and cand.get("candidate.Doubler") is not None
    assert validate_graph(g, registry=cand) == []
    from harness.canvas.episode_log import EpisodeLog
    log = EpisodeLog()
    with GraphRunner(g, registry=cand, candidate_dir=tmp_path) as runner:
        assert runner.run_episode({"seed": 0}, log)["success"]
    assert next(r for r in log.records if r["node"] == "policy")["self"] == {"prompt": "be brave"}


def test_broken_nodeset_is_reported_with_file_and_line(tmp_path):
    (tmp_path / "nodeset").mkdir()
    (tmp_path / "nodeset" / "ok.py").write_text(NODESET)
    (tmp_path / "nodeset" / "broken.py").write_text("x = 1\ndef f(:\n")
    (tmp_path / "nodeset" / "raises.py").write_text("import math\n\nraise RuntimeError('nope')\n")
    g = {"schema_version": 1, "executor": "babyai", "nodes": {}}
    problems = [p for p in validate_graph(g, candidate_dir=tmp_path) if p.code == "nodeset_error"]
    messages = sorted(p.message for p in problems)
    assert len(messages) == 2
    assert messages[0].startswith("nodeset/broken.py:2: SyntaxError")
    assert messages[1].startswith("nodeset/raises.py:3: RuntimeError: nope")
    assert for_graph(g, tmp_path).get("candidate.Doubler") is not None  # the good file still loaded


def test_nodeset_overlay_reloads_when_a_file_changes(tmp_path):
    (tmp_path / "nodeset").mkdir()
    src = tmp_path / "nodeset" / "mine.py"
    src.write_text(NODESET)
    g = corridor_graph()
    first = for_graph(g, tmp_path)
    src.write_text(NODESET.replace('"Doubler"', '"Tripler"'))
    second = for_graph(g, tmp_path)
    assert second is not first
    assert second.get("candidate.Tripler") is not None and second.get("candidate.Doubler") is None


EXTENDING_NODESET = '''
from harness.canvas.registry import Node, node_type

@node_type("Farther", extends="babyai.WallFollowExplore",
           config_schema={"properties": {"patience": {"type": "integer", "default": 4}}},
           doc="Wall following that remembers how patient it is.")
class Farther(Node):
    def setup(self):
        super().setup()
        self.seen_patience = self.config["patience"]
'''


def test_candidate_type_extends_an_executor_type_keeping_its_ports_role_and_config_defaults(tmp_path):
    (tmp_path / "nodeset").mkdir()
    (tmp_path / "nodeset" / "farther.py").write_text(EXTENDING_NODESET)
    graph = {"schema_version": 1, "executor": "babyai", "nodes": {}}
    overlay = for_graph(graph, tmp_path)
    assert overlay.load_errors == []
    parent, child = overlay.get("babyai.WallFollowExplore"), overlay.get("candidate.Farther")
    assert child.inputs == parent.inputs and child.outputs == parent.outputs and child.role == parent.role
    parent_defaults = {k: v["default"] for k, v in parent.config_schema["properties"].items() if "default" in v}
    node = child.cls("explore", {})
    assert node.config == {**parent_defaults, "patience": 4}
    # the class runs in the sandbox process, where it builds on the parent's (super().setup() works there)
    assert issubclass(child.cls, IsolatedNode) and not issubclass(child.cls, parent.cls)
    node.setup()
    node.close()


def test_candidate_type_with_an_unknown_role_or_parent_is_a_load_error(tmp_path):
    (tmp_path / "nodeset").mkdir()
    (tmp_path / "nodeset" / "bad.py").write_text(
        "from harness.canvas.registry import Node, node_type\n"
        "@node_type('Odd', role='planer')\nclass Odd(Node):\n    pass\n")
    (tmp_path / "nodeset" / "orphan.py").write_text(
        "from harness.canvas.registry import Node, node_type\n"
        "@node_type('Orphan', extends='babyai.NoSuchType')\nclass Orphan(Node):\n    pass\n")
    overlay = for_graph({"schema_version": 1, "executor": "babyai", "nodes": {}}, tmp_path)
    errors = dict(overlay.load_errors)
    assert "unknown role 'planer'" in errors["nodeset/bad.py:2"] and "planner" in errors["nodeset/bad.py:2"]
    assert "extends='babyai.NoSuchType': no such node type" in errors["nodeset/orphan.py:2"]


def test_every_babyai_type_documents_its_full_behaviour_with_fallbacks():
    reg = default_registry()
    reg.ensure_executor("babyai")
    types = {nt.name: nt.to_dict() for nt in reg.all() if nt.name.startswith("babyai.") and not nt.is_simulator}
    assert len(types) >= 15
    assert all(len(t["behaviour"]) > len(t["doc"]) for t in types.values()), \
        [n for n, t in types.items() if len(t["behaviour"]) <= len(t["doc"])]
    assert "a single `left` turn" in types["babyai.FrontierExplore"]["behaviour"]



def _documented_types(executor: str) -> dict[str, dict]:
    reg = default_registry()
    assert reg.ensure_executor(executor) is None
    types = {nt.name: nt.to_dict() for nt in reg.all()
             if nt.name.startswith(executor + ".") and not nt.is_simulator}
    short = [n for n, t in types.items() if len(t["behaviour"]) <= len(t["doc"])]
    assert not short, f"{executor} types whose behaviour is no longer than their doc: {short}"
    return types


def test_every_mapgpt_type_documents_its_full_behaviour_with_fallbacks():
    types = _documented_types("mapgpt")
    assert len(types) >= 11
    parser = " ".join(types["mapgpt.ActionParser"]["behaviour"].split())
    assert "not among the options selects the first option with `valid: false`" in parser


def test_every_manipulation_type_documents_its_full_behaviour_with_fallbacks():
    import importlib.util

    if importlib.util.find_spec("robosuite") is None:
        pytest.skip("the manipulation executor's node types need robosuite")
    types = _documented_types("manipulation")
    assert len(types) >= 7
    policy = " ".join(types["manipulation.VLAPolicy"]["behaviour"].split())
    assert "a black frame when `images` or that camera is missing" in policy


def test_every_simulators_feedback_says_it_reports_the_previous_tick():
    """The runtime steps the simulator at the end of a tick, so what `feedback` reports is read one
    tick later; each simulator's port doc says so in the same words."""
    reg = default_registry()
    loaded = [ex for ex in ("babyai", "mapgpt", "manipulation", "libero", "eqa", "smartway")
              if reg.ensure_executor(ex) is None]
    assert {"babyai", "mapgpt"} <= set(loaded)
    docs = {nt.name: nt.outputs["feedback"].doc for nt in reg.all() if nt.is_simulator and "feedback" in nt.outputs}
    assert len(docs) >= len(loaded)
    wrong = [name for name, doc in docs.items()
             if "It reports the previous tick: the actions sent at tick t" not in doc or "at tick t + 1" not in doc
             or "at tick 0" not in doc]
    assert wrong == []


def test_every_built_in_config_schema_is_a_valid_schema():
    """Built-in types skip the schema check at registration (start-up speed); this is that check."""
    from jsonschema import Draft202012Validator

    from harness.canvas.registry import default_registry
    registry = default_registry()
    for executor in ("babyai", "mapgpt"):
        assert registry.ensure_executor(executor) is None
    types = registry.all()
    assert len(types) > 20
    for nt in types:
        Draft202012Validator.check_schema(nt.config_schema)

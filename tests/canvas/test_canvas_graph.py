"""Graph files: loading errors with line/column, flattening, hashing."""

from __future__ import annotations

import json

import pytest
from canvas_corridor import corridor_graph

from harness.canvas import CompositeError, GraphLoadError, candidate_hash, flatten, graph_hash, load_graph
from harness.errors import UserError


def test_load_graph_file_and_folder(tmp_path):
    g = corridor_graph()
    (tmp_path / "graph.json").write_text(json.dumps(g))
    assert load_graph(tmp_path / "graph.json") == g
    assert load_graph(tmp_path) == g


def test_malformed_json_names_file_line_and_column(tmp_path):
    p = tmp_path / "g.json"
    p.write_text('{\n  "nodes": {\n    "a": 1,\n  }\n}\n')
    with pytest.raises(GraphLoadError) as info:
        load_graph(p)
    err = info.value
    assert isinstance(err, UserError) and err.exit_code == 2
    assert (err.line, err.column) == (4, 3)
    assert err.message.startswith(f"{p}:4:3: malformed JSON in graph")


@pytest.mark.parametrize("content,needle", [(None, "not found"), ("[1]", "must be a JSON object, got list"),
                                            ("", "malformed JSON")])
def test_other_load_errors(tmp_path, content, needle):
    p = tmp_path / "g.json"
    if content is not None:
        p.write_text(content)
    with pytest.raises(GraphLoadError, match=needle):
        load_graph(p)


def test_schema_option_reports_all_violations(tmp_path):
    p = tmp_path / "g.json"
    p.write_text(json.dumps({"schema_version": 1, "executor": "x", "nodes": {"a": {}}, "edges": [{"from": "a"}]}))
    with pytest.raises(GraphLoadError) as info:
        load_graph(p, schema=True)
    assert len(info.value.details) == 3 and "(and 2 more)" in info.value.message


def test_flatten_nested_composites_with_fan_out():
    g = corridor_graph()
    g["nodes"]["policy"] = {"type": "composite", "config": {"composite": "outer"}}
    g["edges"] = [{"from": "sim.position", "to": "policy.pos"}, {"from": "policy.act", "to": "sim.action"}]
    g["grants"] = {"sim": {"read": []}}
    g["composites"] = {
        "outer": {"nodes": {"core": {"type": "composite", "config": {"composite": "inner"}},
                            "tap": {"type": "core.Passthrough", "config": {}}},
                  "edges": [{"from": "core.out", "to": "tap.value", "delay": 1}],
                  "inputs": {"pos": ["core.pos", "tap.value"]},
                  "outputs": {"act": "core.out"},
                  "grants": {"tap": {"read": ["x"]}}},
        "inner": {"nodes": {"fwd": {"type": "test.Forward", "config": {}}},
                  "inputs": {"pos": "fwd.position"}, "outputs": {"out": "fwd.action"}},
    }
    flat = flatten(g)
    assert sorted(flat["nodes"]) == ["policy/core/fwd", "policy/tap", "sim"]
    assert "composites" not in flat
    assert sorted((e["from"], e["to"], e.get("delay", 0)) for e in flat["edges"]) == sorted([
        ("policy/core/fwd.action", "policy/tap.value", 1),
        ("sim.position", "policy/core/fwd.position", 0),
        ("sim.position", "policy/tap.value", 0),
        ("policy/core/fwd.action", "sim.action", 0),
    ])
    assert flat["grants"] == {"sim": {"read": []}, "policy/tap": {"read": ["x"]}}
    g["composites"]["inner"]["nodes"]["again"] = {"type": "composite", "config": {"composite": "outer"}}
    with pytest.raises(CompositeError, match="contains itself"):
        flatten(g)


def test_graph_hash_ignores_key_order_and_whitespace(tmp_path):
    g = corridor_graph()
    reordered = json.loads(json.dumps(g, sort_keys=True))
    reordered = dict(reversed(list(reordered.items())))
    assert graph_hash(g) == graph_hash(reordered)
    assert len(graph_hash(g)) == 64
    changed = corridor_graph()
    changed["nodes"]["sim"]["config"]["length"] = 5
    assert graph_hash(changed) != graph_hash(g)


def test_candidate_hash_covers_other_files_but_not_formatting(tmp_path):
    (tmp_path / "graph.json").write_text(json.dumps(corridor_graph()))
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "system.md").write_text("hello")
    h1 = candidate_hash(tmp_path)
    (tmp_path / "graph.json").write_text(json.dumps(corridor_graph(), indent=4))
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert candidate_hash(tmp_path) == h1
    (tmp_path / "prompts" / "system.md").write_text("hello!")
    assert candidate_hash(tmp_path) != h1

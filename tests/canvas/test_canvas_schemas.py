"""harness.schemas: loading, full error reports, and the fast path agreeing with jsonschema."""

from __future__ import annotations

import copy

import pytest
from canvas_corridor import corridor_graph

from harness.schemas import SchemaNotFound, fast_is_valid, load_schema, validate_instance


def test_load_schema_is_cached_and_named_errors():
    assert load_schema("graph") is load_schema("graph.schema.json")
    assert load_schema("patch")["title"].startswith("Structured graph patch")
    with pytest.raises(SchemaNotFound):
        load_schema("nope")


def test_validate_instance_reports_every_error_with_a_pointer():
    g = corridor_graph()
    g["nodes"]["policy"]["type"] = 7
    g["edges"][0]["from"] = "nodot"
    g["budgets"]["max_steps"] = 0
    errors = validate_instance("graph", g)
    assert [e.split(":")[0] for e in errors] == ["/budgets/max_steps", "/edges/0/from", "/nodes/policy/type"]


def _single_faults():
    edits = [
        lambda g: g["nodes"].__setitem__("bad id", {"type": "core.Constant"}),
        lambda g: g.__setitem__("grants", {"a b": {"read": []}}),
        lambda g: g.__setitem__("grants", {"policy": {"read": ["x", "x"]}}),
        lambda g: g.__setitem__("state", {"c": {"type": "Int", "reducer": "add", "lifetime": "forever"}}),
        lambda g: g.__setitem__("state", {"c": {"type": "Int", "reducer": "add", "lifetime": "run", "x": 1}}),
        lambda g: g.__setitem__("model_profile", {"name": "x"}),
        lambda g: g.__setitem__("model_profile", "x"),
        lambda g: g["edges"].append({"from": "a.b", "to": "c.d", "delay": 2}),
        lambda g: g["budgets"].__setitem__("wall_seconds", 0),
        lambda g: g.__setitem__("schema_version", 2),
        lambda g: g.__setitem__("composites", {"c": {"nodes": {}, "inputs": {"p": []}}}),
        lambda g: g.__setitem__("composites", {"c": {"nodes": {}, "outputs": {"p": ["a.b"]}}}),
        lambda g: g["nodes"]["sim"].__setitem__("config", []),
        lambda g: g.pop("executor"),
        lambda g: g.__setitem__("termination", {"max_ticks": 1.5}),
    ]
    for edit in edits:
        g = copy.deepcopy(corridor_graph())
        edit(g)
        yield g
    ok = corridor_graph(description="fine", composites={"c": {"nodes": {}, "inputs": {"p": ["a.b", "c.d"]}}})
    yield ok


def test_fast_path_agrees_with_jsonschema():
    fast = fast_is_valid("graph")
    for g in _single_faults():
        assert fast(g) == (validate_instance("graph", g) == []), g
    assert fast(corridor_graph())


def test_compiled_checks_are_kept_between_processes_and_survive_a_corrupt_file(tmp_path, monkeypatch):
    from harness.schemas import _compile_cached, compiled_schema_dir

    monkeypatch.setenv("ARCHITECT_CACHE_DIR", str(tmp_path))
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}
    first = _compile_cached(schema)
    files = list(compiled_schema_dir().glob("schema_*.bin"))
    assert len(files) == 1
    again = _compile_cached(schema)  # loaded from the file
    files[0].write_bytes(b"not marshal data")
    fallback = _compile_cached(schema)  # compiled in memory
    for check in (first, again, fallback):
        assert check({"n": 2}) == {"n": 2}
        for bad in ({"n": 0}, {}, {"n": "2"}):
            try:
                check(bad)
            except Exception as exc:  # fastjsonschema's JsonSchemaValueException
                assert "n" in str(exc) or "must" in str(exc)
            else:
                raise AssertionError(f"{bad} accepted")

"""The canvas CLI: validate, patch, diff, hash, nodes (exit codes, --json, no tracebacks)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

GRAPHS = Path(__file__).resolve().parents[1] / "graphs"


def cli(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def cli_json(*args):
    code, out = cli(*args, "--json")
    return code, json.loads(out)


def test_validate_valid_graph():
    code, out = cli("validate", GRAPHS / "valid_minimal.json")
    assert code == 0 and "valid" in out
    code, data = cli_json("validate", GRAPHS / "valid_state_composite.json")
    assert code == 0 and data["ok"] and data["valid"] and data["problems"] == [] and len(data["graph_hash"]) == 64


def test_validate_faulty_graph_lists_problems():
    code, data = cli_json("validate", GRAPHS / "faulty_many.json")
    assert code == 1 and data["valid"] is False and data["errors"] == len(data["problems"]) > 10
    code, out = cli("validate", GRAPHS / "faulty_many.json")
    assert code == 1
    for text in ("privileged_leak", "unknown_type", "cycle", "/edges/7", "babyai.Perceptoin"):
        assert text in out


@pytest.mark.parametrize("name,needle", [("malformed.json", "malformed.json:6:3: malformed JSON"),
                                         ("not_an_object.json", "must be a JSON object"),
                                         ("missing.json", "not found")])
def test_validate_unreadable_inputs(name, needle):
    code, out = cli("validate", GRAPHS / name)
    assert code == 2 and needle in out and "Traceback" not in out
    code, data = cli_json("validate", GRAPHS / name)
    assert code == 2 and data["ok"] is False and needle in data["error"]


def test_cli_never_prints_a_traceback_in_a_real_process():
    proc = subprocess.run([sys.executable, "-c", "from harness.cli import main; main()", "validate",
                           str(GRAPHS / "malformed.json")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "malformed.json:6:3" in proc.stderr


def test_patch_writes_valid_result(tmp_path):
    out = tmp_path / "out.json"
    code, data = cli_json("patch", GRAPHS / "valid_minimal.json", GRAPHS / "patches" / "add_gate.json", "-o", out)
    assert code == 0 and data["applied"] and data["written"] and data["valid"]
    result = json.loads(out.read_text())
    assert "gate" in result["nodes"]
    # named for what it hashes: the graph alone, as `architect hash` (not `--candidate`) prints it
    assert "hash" not in data and data["graph_hash"] == cli("hash", out)[1].strip()


def test_patch_failing_midway_writes_nothing(tmp_path):
    graph = tmp_path / "graph.json"
    shutil.copy(GRAPHS / "valid_minimal.json", graph)
    before = graph.read_bytes()
    out = tmp_path / "out.json"
    out.write_text("previous content")
    code, data = cli_json("patch", graph, GRAPHS / "patches" / "fails_at_op_2.json", "-o", out)
    assert code == 1 and data["ok"] is False
    assert data["details"] == {"index": 2, "op": "remove_edge", "reason": "no edge policy.value -> nowhere.x",
                               "file": str(GRAPHS / "patches" / "fails_at_op_2.json")}
    assert out.read_text() == "previous content" and graph.read_bytes() == before
    # in place, failing: the graph itself is untouched
    code, out_text = cli("patch", graph, GRAPHS / "patches" / "fails_at_op_2.json", "-o", graph)
    assert code == 1 and "op #2 (remove_edge) failed" in out_text and graph.read_bytes() == before


def test_patch_reports_problems_of_the_result(tmp_path):
    patch = tmp_path / "p.json"
    patch.write_text(json.dumps({"ops": [{"op": "remove_edge", "from": "policy.value", "to": "sim.actions"}]}))
    out = tmp_path / "o.json"
    code, data = cli_json("patch", GRAPHS / "valid_minimal.json", patch, "-o", out)
    assert code == 1 and data["written"] and not data["valid"]
    assert [p["code"] for p in data["problems"]] == ["unconnected_input"]
    out.unlink()
    code, data = cli_json("patch", GRAPHS / "valid_minimal.json", patch, "-o", out, "--refuse-invalid")
    assert code == 1 and not data["written"] and not out.exists()


def test_patch_with_malformed_patch_file(tmp_path):
    patch = tmp_path / "p.json"
    patch.write_text('{"ops": [')
    code, out = cli("patch", GRAPHS / "valid_minimal.json", patch, "-o", tmp_path / "o.json")
    assert code == 2 and "malformed JSON in patch" in out and not (tmp_path / "o.json").exists()


def test_diff_then_patch_reproduces_b(tmp_path):
    a, b = GRAPHS / "valid_minimal.json", GRAPHS / "valid_state_composite.json"
    code, patch_text = cli("diff", a, b)
    assert code == 0
    patch = tmp_path / "p.json"
    patch.write_text(patch_text)
    out = tmp_path / "o.json"
    code, data = cli_json("patch", a, patch, "-o", out)
    assert json.loads(out.read_text()) == json.loads(b.read_text())
    code, data = cli_json("diff", a, b)
    assert code == 0 and data["ops"] == len(data["patch"]["ops"]) > 0


def test_hash_is_whitespace_insensitive(tmp_path):
    g = json.loads((GRAPHS / "valid_minimal.json").read_text())
    compact = tmp_path / "c.json"
    compact.write_text(json.dumps(g, separators=(",", ":")))
    code1, h1 = cli("hash", GRAPHS / "valid_minimal.json")
    code2, h2 = cli("hash", compact)
    assert code1 == code2 == 0 and h1 == h2 and len(h1.strip()) == 64
    (tmp_path / "graph.json").write_text(json.dumps(g))
    code, data = cli_json("hash", tmp_path, "--candidate")
    assert code == 0 and data["kind"] == "candidate" and data["hash"] != h1.strip()


def test_nodes_lists_the_alphabet():
    code, data = cli_json("nodes", "--executor", "babyai")
    assert code == 0
    by_name = {t["name"]: t for t in data["types"]}
    sim = by_name["babyai.Simulator"]
    assert sim["simulator"] and sim["role"] == "simulator" and "config_schema" in sim
    assert any(p.get("privileged") for p in sim["outputs"].values())
    assert "core.Constant" in by_name
    code, out = cli("nodes")
    assert code == 0 and "core.Gate" in out
    code, out = cli("nodes", "--executor", "nope")
    assert code == 2 and "unknown executor or seed 'nope'" in out
    code, data = cli_json("nodes", "--executor", "mapgpt-heuristic")  # a seed name stands for its executor
    assert code == 0 and "mapgpt.Simulator" in {t["name"] for t in data["types"]}


def test_nodes_narrows_to_roles_and_types_and_maps_every_role():
    code, whole = cli_json("nodes", "--executor", "babyai")
    code, data = cli_json("nodes", "--executor", "babyai", "--role", "memory", "--type", "babyai.Simulator")
    assert code == 0 and data["roles"] == whole["roles"]
    assert set(data["roles"]["memory"]) == {t["name"] for t in whole["types"] if t["role"] == "memory"}
    assert not ({t["name"] for t in data["types"]} - set(data["roles"]["memory"]))  # --role and --type: both hold
    code, data = cli_json("nodes", "--executor", "babyai", "--role", "memory")
    assert [t["role"] for t in data["types"]] == ["memory"] * len(data["roles"]["memory"])
    code, data = cli_json("nodes", "--executor", "babyai", "--type", "babyai.FullMap", "--type", "core.Gate")
    assert sorted(t["name"] for t in data["types"]) == ["babyai.FullMap", "core.Gate"]
    code, data = cli_json("nodes", "--role", "nope")
    assert code == 2 and "no node role nope; known: " in data["error"] and "--executor" in data["error"]


def test_every_command_has_help():
    for cmd in ("validate", "patch", "diff", "hash", "nodes"):
        code, out = cli(cmd, "--help")
        assert code == 0 and "Usage:" in out and len(out) > 200


def test_nodes_includes_a_candidates_own_types(tmp_path):
    (tmp_path / "nodeset").mkdir()
    (tmp_path / "nodeset" / "mine.py").write_text(
        "from harness.canvas.registry import Node, node_type\n\n"
        "@node_type('Shout', inputs={'text': 'Text'}, outputs={'text': 'Text'}, doc='Upper-cases text.')\n"
        "class Shout(Node):\n    def step(self, inputs, ctx):\n        return {'text': inputs['text'].upper()}\n")
    code, data = cli_json("nodes", "--executor", "babyai", "--candidate-dir", tmp_path)
    assert code == 0
    shout = next(t for t in data["types"] if t["name"] == "candidate.Shout")
    assert shout["doc"] == "Upper-cases text." and shout["inputs"] == {"text": {"type": "Text"}}


def test_patch_cannot_write_out(tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("a file, not a folder")
    code, out = cli("patch", GRAPHS / "valid_minimal.json", GRAPHS / "patches" / "add_gate.json",
                    "-o", blocker / "o.json")
    assert code == 2 and "cannot write" in out and "Traceback" not in out
    assert blocker.read_text() == "a file, not a folder"


def test_validate_several_graphs_reports_the_worst_exit_code():
    code, out = cli("validate", GRAPHS / "valid_minimal.json", GRAPHS / "valid_state_composite.json")
    assert code == 0 and out.count(": valid") == 2
    code, data = cli_json("validate", *sorted(GRAPHS.glob("*.json")))
    assert code == 2 and data["valid"] is False and len(data["graphs"]) == len(list(GRAPHS.glob("*.json")))
    by_name = {Path(g["graph"]).name: g for g in data["graphs"]}
    assert by_name["valid_minimal.json"]["valid"] and not by_name["faulty_many.json"]["valid"]
    assert "malformed JSON" in by_name["malformed.json"]["error"]
    code, _ = cli("validate", GRAPHS / "valid_minimal.json", GRAPHS / "faulty_llm.json")
    assert code == 1


def test_patch_validates_against_the_folder_it_writes_to(tmp_path):
    """A `candidate.X` type whose file is in OUT's nodeset/ is known to the patched graph,
    however the input graph's folder looks; the output names the folder used."""
    out_dir = tmp_path / "try"
    (out_dir / "nodeset").mkdir(parents=True)
    (out_dir / "nodeset" / "echo.py").write_text(
        "from harness.canvas.registry import Node, node_type\n\n\n"
        "@node_type('Echo', inputs={'value': 'ActionChunk'}, outputs={'value': 'ActionChunk'},\n"
        "           doc='Passes its input on.')\n"
        "class Echo(Node):\n"
        "    def step(self, inputs, ctx):\n"
        "        return {'value': inputs['value']}\n")
    patch = tmp_path / "p.json"
    patch.write_text(json.dumps({"ops": [
        {"op": "add_node", "id": "echo", "type": "candidate.Echo", "config": {}},
        {"op": "remove_edge", "from": "policy.value", "to": "sim.actions"},
        {"op": "add_edge", "from": "policy.value", "to": "echo.value"},
        {"op": "add_edge", "from": "echo.value", "to": "sim.actions"}]}))
    out = out_dir / "graph.json"
    code, data = cli_json("patch", GRAPHS / "valid_minimal.json", patch, "-o", out)
    assert code == 0 and data["valid"], data["problems"]
    assert data["validated_in"] == str(out_dir.resolve())
    assert cli_json("validate", out_dir)[1]["valid"]
    # written elsewhere, without that nodeset/, the same patch names the unknown type
    code, data = cli_json("patch", GRAPHS / "valid_minimal.json", patch, "-o", tmp_path / "bare" / "graph.json")
    assert code == 1 and "unknown_type" in [p["code"] for p in data["problems"]]

"""The bad-input contract, for every CLI entry point that reads files, over a
corpus of hostile inputs by class (deep nesting, huge integers, non-finite
numbers, lone surrogates, binary content, duplicate keys, YAML specials,
truncation, wrong top-level type): non-zero exit, no traceback, one short
line naming the file, and nothing that was there changed."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import PROJECT_ROOT
from harness.cli import main

SEED = PROJECT_ROOT / "seeds" / "babyai"
SEED_LLM = PROJECT_ROOT / "seeds" / "babyai-llm"
GOOD_GRAPH = json.loads((SEED / "graph.json").read_text())


def _graph_text(**replace) -> str:
    return json.dumps(dict(GOOD_GRAPH, **replace))


# -- the JSON corpus: (case id, file bytes) ----------------------------------------
JSON_CASES = {
    # nesting far beyond any format's need (RecursionError before)
    "deep_arrays_100k": b"[" * 100_000 + b"]" * 100_000,
    "deep_objects_5k": b'{"a":' * 5_000 + b"1" + b"}" * 5_000,
    "deep_in_config": _graph_text(name="x")[:-1].encode() + b', "extra": ' + b"[" * 3000 + b"]" * 3000 + b"}",
    "deep_unclosed": b"[" * 200_000,
    # integers no format needs (ValueError from int() before)
    "int_5000_digits": b'{"schema_version": ' + b"9" * 5000 + b"}",
    "int_negative_300": _graph_text(name="x").replace('"max_steps": ', '"max_steps": -' + "7" * 300 + ", \"_\": ").encode(),
    "int_in_array": b"[1, 2, " + b"1" * 4301 + b"]",
    # non-finite numbers (accepted, then crashed the canonical hash)
    "nan": _graph_text().replace('"schema_version": 1', '"schema_version": NaN').encode(),
    "infinity": b'{"budgets": {"wall_seconds": Infinity}}',
    "minus_infinity": b"[-Infinity]",
    "overflow_1e999": _graph_text().replace('"schema_version": 1', '"schema_version": 1e999').encode(),
    "overflow_neg": b'{"a": -1.5e400}',
    # lone UTF-16 surrogates (not characters)
    "lone_high": _graph_text(name="bad\\ud800name").replace("\\\\ud800", "\\ud800").encode(),
    "lone_low_key": b'{"\\udfff": 1}',
    "reversed_pair": b'{"name": "\\udc00\\ud800"}',
    "trailing_high": b'["ok", "end\\udbff"]',
    # binary content
    "png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
    "nul_in_text": b'{"name": "a\x00b"}',
    "latin1": '{"name": "caf\xe9"}'.encode("latin-1"),
    "utf16": '{"name": "x"}'.encode("utf-16"),
    "gzip": b"\x1f\x8b\x08\x00" + bytes(64),
    # duplicate keys (last one silently won before)
    "dup_top": b'{"name": "a", "name": "b"}',
    "dup_node_id": _graph_text().replace('"nodes": {', '"nodes": {"sim": {"type": "core.Constant", "config": {}}, ', 1).encode(),
    "dup_nested": b'{"a": {"b": 1, "c": 2, "b": 3}}',
    "dup_unicode_escape": b'{"k": 1, "\\u006b": 2}',
    # plain malformed and wrong shape
    "empty": b"",
    "truncated": _graph_text().encode()[:-40],
    "trailing_garbage": _graph_text().encode() + b" x",
    "top_level_list": b"[1, 2, 3]",
}

YAML_CASES = {
    "deep_flow_100k": b"a: " + b"[" * 100_000 + b"]" * 100_000,
    "deep_block": "".join("  " * i + "k:\n" for i in range(400)).encode(),
    "dup_key": b"backend: openai\nmodel: m\nmodel: n\n",
    "dup_nested": b"backend: openai\nmodel: m\nextra: {a: 1, a: 2}\n",
    "nan_timeout": b"backend: openai\nmodel: m\ntimeout: .nan\n",
    "inf_timeout": b"backend: openai\nmodel: m\ntimeout: .inf\n",
    "neg_inf_price": b"backend: openai\nmodel: m\nprice_input_per_mtok: -.Inf\n",
    "overflow_float": b"backend: openai\nmodel: m\ntimeout: 1e999\n",
    "int_5000_digits": b"backend: openai\nmodel: m\nmax_tokens: " + b"9" * 5000 + b"\n",
    "hex_huge": b"backend: openai\nmodel: m\nmax_tokens: 0x" + b"f" * 200 + b"\n",
    "binary_bytes": b"\x00\x01\x02\xff\xfe",
    "png": b"\x89PNG\r\n\x1a\n" + bytes(range(200)),
    "control_char": b"backend: openai\nmodel: \x07bell\n",
    "lone_surrogate": b'backend: openai\nmodel: "m\\ud800"\n',
    "alias_bomb": b"a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nbackend: openai\nmodel: m\n",
    "binary_tag": b"backend: openai\nmodel: !!binary aGVsbG8=\n",
    "python_tag": b"backend: !!python/object/apply:os.system ['true']\nmodel: m\n",
    "truncated": b"backend: openai\nmodel: [m\n",
    "not_a_mapping": b"- backend\n- model\n",
    "empty": b"",
}


def _snapshot(root: Path) -> dict[str, str]:
    """Content of every file (a run's git internals and lock files aside: git refreshes its index cache)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.relative_to(root).parts
            and not p.name.endswith((".lock", ".lock.pid"))}


def _run(args: list[str]):
    result = CliRunner().invoke(main, args)
    exception = result.exception
    assert exception is None or isinstance(exception, SystemExit), \
        f"uncaught {type(exception).__name__}: {exception}"
    return result


def _assert_contract(result, names: list[str], as_json: bool) -> None:
    out = result.stdout + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code not in (0, None), out[:500]
    assert "Traceback" not in out
    if as_json:
        lines = [line for line in result.stdout.splitlines() if line.strip()]
        assert len(lines) == 1, result.stdout[:500]
        payload = json.loads(lines[0])
        assert payload.get("ok") is False
        message = payload.get("error") or ""
    else:
        message = result.stderr
    assert any(name in message for name in names), message[:500]
    assert len(message) < 2000


def _entry_points(bad: Path, tmp: Path) -> dict[str, list[str]]:
    good = str(SEED / "graph.json")
    return {
        "validate": ["validate", str(bad)],
        "hash": ["hash", str(bad)],
        "patch_graph": ["patch", str(bad), str(PROJECT_ROOT / "docs/examples/full_map_frontier.patch.json"),
                        "-o", str(tmp / "out.json")],
        "patch_file": ["patch", good, str(bad), "-o", str(tmp / "out.json")],
        "diff": ["diff", good, str(bad)],
        "experiment": ["experiment", "run", str(bad), "--tier", "smoke"],
    }


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("case", sorted(JSON_CASES))
def test_json_inputs_every_file_command(case, as_json, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    bad = folder / "graph.json"
    bad.write_bytes(JSON_CASES[case])
    before = _snapshot(folder)
    for name, args in _entry_points(bad, tmp_path).items():
        if case == "top_level_list" and name == "patch_file":
            continue  # a list is a valid RFC 6902 patch document (its ops are then checked)
        result = _run(args + (["--json"] if as_json else []))
        _assert_contract(result, [str(bad), bad.name], as_json)
        assert _snapshot(folder) == before, name
        assert not (tmp_path / "out.json").exists(), name


@pytest.mark.parametrize("case", sorted(YAML_CASES))
def test_yaml_profiles(case, tmp_path):
    bad = tmp_path / "profile.yaml"
    bad.write_bytes(YAML_CASES[case])
    before = _snapshot(tmp_path)
    for as_json in (False, True):
        result = _run(["models", "check", str(bad)] + (["--json"] if as_json else []))
        _assert_contract(result, [str(bad), bad.name], as_json)
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("case", ["png", "latin1", "nul_in_text", "deep_arrays_100k"])
def test_context_harness_files(case, tmp_path):
    bad = tmp_path / "build_context.py"
    bad.write_bytes(JSON_CASES[case])
    result = _run(["models", "check-harness", str(bad), "--json"])
    _assert_contract(result, [bad.name], as_json=True)


@pytest.mark.parametrize("path", ["../../../../etc/passwd", "/etc/passwd", "profiles/../../../../etc/hostname",
                                  "nodeset/../../outside.yaml", "profiles/missing.yaml", "."])
def test_profile_paths_stay_inside_the_candidate_or_profiles(path, tmp_path):
    candidate = tmp_path / "cand"
    shutil.copytree(SEED_LLM, candidate)
    (tmp_path / "outside.yaml").write_text("backend: openai\nmodel: m\n")
    graph = json.loads((candidate / "graph.json").read_text())
    graph["model_profile"]["path"] = path
    (candidate / "graph.json").write_text(json.dumps(graph))
    before = _snapshot(candidate)
    result = _run(["validate", str(candidate / "graph.json"), "--json"])
    assert result.exit_code != 0
    payload = json.loads(result.stdout)
    assert any(p["code"] == "model_profile" and p["path"] == "/model_profile/path"
               for r in payload.get("results", [payload]) for p in r.get("problems", [])), payload
    result = _run(["experiment", "run", str(candidate), "--tier", "smoke", "--json"])
    _assert_contract(result, ["graph.json"], as_json=True)
    assert _snapshot(candidate) == before


def test_a_failing_op_of_a_long_patch_names_the_file_and_stays_short(tmp_path):
    ops = [{"op": "add_node", "id": f"extra{i}", "type": "core.Passthrough", "config": {}} for i in range(600)]
    ops.append({"op": "remove_node", "id": "no-such-node"})
    patch = tmp_path / "long.patch.json"
    patch.write_text(json.dumps({"ops": ops}))
    for as_json in (False, True):
        result = _run(["patch", str(SEED / "graph.json"), str(patch), "-o", str(tmp_path / "o.json")]
                      + (["--json"] if as_json else []))
        _assert_contract(result, [str(patch)], as_json)
        text = result.stdout if as_json else result.stderr
        assert "op #600 (remove_node)" in text and len(text) < 1200
    assert not (tmp_path / "o.json").exists()


# -- run records ---------------------------------------------------------------------
RUN_RECORD_CASES = {
    "manifest.json": ["png", "nan", "dup_top", "deep_arrays_100k", "int_5000_digits", "empty", "lone_low_key"],
    "state.json": ["png", "infinity", "truncated", "dup_nested"],
}


@pytest.mark.parametrize("record,case", [(r, c) for r, cases in RUN_RECORD_CASES.items() for c in cases])
def test_run_records(record, case, run_dir):
    target = run_dir / record
    target.write_bytes(JSON_CASES[case])
    before = _snapshot(run_dir)
    commands = [["status", str(run_dir)], ["stage", str(run_dir)]]
    for args in commands:
        result = _run(args + ["--json"])
        assert result.exit_code != 0 or record == "state.json", (args, result.stdout)
        out = result.stdout + result.stderr
        assert "Traceback" not in out
        if result.exit_code != 0:
            assert record in result.stdout or "not consistent" in result.stdout, result.stdout[:400]
    if record == "manifest.json":
        assert _snapshot(run_dir) == before  # a run whose manifest cannot be read is never changed

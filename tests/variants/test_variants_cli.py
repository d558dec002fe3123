"""The variant subcommands' conventions: --json prints one object, bad input is
a one-line error with a non-zero exit and leaves files as they were."""

import json

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.variants.kdloop import memory as kdloop

GROUPS = {"adas": ["archive", "history", "debug"], "aflow": ["select", "experience", "duplicate", "converged"],
          "kdloop": ["init", "append", "delete", "show", "specs", "evaluate", "pick", "reflect-due", "reflected", "coverage", "stop", "hypothesis update"],
          "random": ["propose"]}


def invoke(*argv):
    result = CliRunner().invoke(main, [str(a) for a in argv], prog_name="architect", catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("argv", [["fitness"]] + [[g, *c.split()] for g, cs in GROUPS.items() for c in cs])
def test_every_subcommand_explains_itself(argv):
    code, out, _ = invoke(*argv, "--help")
    assert code == 0 and "Usage: architect " + " ".join(argv) in out and len(out.splitlines()) > 4


def test_cli_lists_exactly_the_memory_files():
    from harness.variants.kdloop.cli import MEMORY_FILES

    assert sorted(MEMORY_FILES) == sorted(kdloop.MEMORY_FILES)


def test_bad_jsonl_row_is_refused_and_the_file_kept(fake_run):
    fake_run.commit([1, 0])
    kdloop.init_memory(fake_run.paths)
    path = fake_run.root / "memory" / "hypotheses.jsonl"
    path.write_text('{"id": "h1", "statement": "s", "axes": ["prompt"], "status": "open"}\n')
    code, out, _ = invoke("kdloop", "append", fake_run.root, "hypotheses", "--text", '{"id": 1}', "--json")
    body = json.loads(out)
    assert code != 0 and body["ok"] is False and "kdloop_hypothesis" in body["error"]
    assert path.read_text().count("\n") == 1
    code, out, err = invoke("kdloop", "delete", fake_run.root, "hypotheses", "--line", "5")
    assert code != 0 and out == "" and err.startswith("error: ") and err.count("\n") == 1
    assert "Traceback" not in err


def test_errors_name_what_is_missing(fake_run, tmp_path):
    fake_run.commit([1, 0])
    staging = fake_run.staging("1")
    code, out, _ = invoke("fitness", fake_run.root, staging, "--json")
    assert code != 0 and "eval/metrics.json" in json.loads(out)["error"]
    code, out, _ = invoke("adas", "debug", fake_run.root, staging, "--json")
    assert code != 0 and "--error" in json.loads(out)["error"]
    code, out, _ = invoke("kdloop", "init", tmp_path / "nowhere", "--json")
    assert code != 0 and "no run at" in json.loads(out)["error"]
    code, out, _ = invoke("kdloop", "specs", fake_run.root, tmp_path / "missing.json", "--json")
    assert code != 0 and "missing.json" in json.loads(out)["error"]


def test_select_defaults_to_the_manifest_seed_and_next_iteration(fake_run):
    fake_run.commit([1, 0, 0, 0])
    fake_run.commit([1, 1, 0, 0], parent=0)
    code, out, _ = invoke("aflow", "select", fake_run.root, "--json")
    body = json.loads(out)
    assert code == 0 and body["seed"] == 7 and body["iteration"] == 2
    assert sorted(c["iteration"] for c in body["candidates"]) == [0, 1]


def test_random_propose_edits_a_real_staged_candidate(driver):
    d = driver
    d.values.update({"$variant": "random", "$executor": "babyai"})
    d.run("loop", "architect init $variant $executor --run-id $variant-$executor OPTIONS --json")
    d.values["$run"] = "random-babyai"
    staging = d.run("variants/random", "architect stage $run --json")["staging"]
    before = (d.workdir / "runs/random-babyai/iterations/0/candidate/graph.json").read_text()
    proposal = d.run("variants/random", "architect random propose $run STAGING --json", STAGING=staging)
    after = json.loads((d.workdir / staging / "candidate" / "graph.json").read_text())
    assert after != json.loads(before) and proposal["axes"] and proposal["description"]
    assert d.run("implementer", "architect check $run $staging --json", staging=staging)["violations"] == []


def test_hypothesis_update_prints_one_object_and_refuses_an_unknown_id(fake_run):
    fake_run.commit([1, 0])
    kdloop.init_memory(fake_run.paths)
    path = fake_run.root / "memory" / "hypotheses.jsonl"
    path.write_text('{"id": "h1", "statement": "s", "axes": ["prompt"], "status": "open"}\n')
    code, out, _ = invoke("kdloop", "hypothesis", "update", fake_run.root, "h1", "--status", "refuted",
                          "--evidence", "iteration 1: worse", "--json")
    body = json.loads(out)
    assert code == 0 and body["after"]["status"] == "refuted" and json.loads(path.read_text())["status"] == "refuted"
    code, out, _ = invoke("kdloop", "hypothesis", "update", fake_run.root, "h7", "--status", "open", "--json")
    assert code != 0 and "no hypothesis 'h7'" in json.loads(out)["error"]

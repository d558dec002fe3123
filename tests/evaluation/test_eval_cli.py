"""`architect experiment run`: --json prints one object, smoke verdict, clean errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from eval_candidates import make_candidate

import executors
from harness.cli import main

ARCHITECT = str(Path(sys.executable).parent / "architect")  # the console script of this environment


def test_json_prints_one_object_with_paths_and_smoke_verdict(eval_env, tmp_path):
    cand = make_candidate(tmp_path / "cand")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["experiment", "run", str(cand), "--tier", "smoke", "--episodes", "2",
                                       "--workers", "1", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)  # exactly one JSON document
    assert body["ok"] is True and body["n"] == 2 and body["tier"] == "smoke"
    assert body["metrics_path"] == str(out / "metrics.json") and (out / "metrics.json").is_file()
    assert body["episodes_dir"] == str(out / "episodes")
    assert body["smoke_gate"] == {"passed": True, "reasons": []}
    assert "episodes" not in body and "graph" not in body  # summary, not the whole file


def test_human_output_reports_a_failing_smoke_gate(eval_env, tmp_path):
    first = executors.load_executor("babyai").episodes("smoke")[0]["episode_id"]
    cand = make_candidate(tmp_path / "cand", misbehave="raise", on_episodes=[first], endless=True, max_steps=5)
    result = CliRunner().invoke(main, ["experiment", "run", str(cand), "--tier", "smoke", "--episodes", "2",
                                       "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "smoke gate: FAILED" in result.stdout and "policy exploded" in result.stdout
    # default output folder: under $ARCHITECT_RESULTS_DIR, named by graph name and hash
    metrics = list((tmp_path / "results").glob("eval-test-raise-endless-*/smoke/metrics.json"))
    assert len(metrics) == 1


def test_malformed_graph_is_a_clear_error_without_traceback(tmp_path):
    bad = tmp_path / "graph.json"
    bad.write_text('{"schema_version": 1, "executor": "babyai",\n "nodes": {,}}')
    env = dict(os.environ, ARCHITECT_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([ARCHITECT, "experiment", "run", str(bad), "--tier", "smoke",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("error: ")
    assert f"{bad}:2:" in proc.stderr and "malformed JSON" in proc.stderr
    assert not (tmp_path / "out").exists()
    proc = subprocess.run([ARCHITECT, "experiment", "run", str(tmp_path / "nope"),
                           "--tier", "smoke", "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    body = json.loads(proc.stdout)
    assert body["ok"] is False and "nope" in body["error"]


def test_prints_from_agent_code_do_not_reach_stdout(eval_env, tmp_path):
    cand = make_candidate(tmp_path / "cand")
    nodeset = cand / "nodeset" / "evalnodes.py"
    nodeset.write_text(nodeset.read_text().replace(
        "        mode = self.config.get(\"misbehave\", \"none\")",
        "        print('chatty node on stdout')\n        mode = self.config.get(\"misbehave\", \"none\")"))
    proc = subprocess.run([ARCHITECT, "experiment", "run", str(cand), "--tier", "smoke", "--episodes", "1",
                           "--workers", "1", "--out", str(tmp_path / "out"), "--json"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] is True  # exactly one JSON document on stdout
    assert "chatty node on stdout" in proc.stderr

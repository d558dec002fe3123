"""--oracle: the executor's ceiling agent on the same episodes as the candidate."""

from __future__ import annotations

import json

from click.testing import CliRunner

from harness.executor_api import seed_graph_path
from harness.cli import main
from harness.evaluation.trace import read_log
from harness.schemas import validate_instance


def test_oracle_runs_the_same_episodes_and_is_never_cached(eval_env, tmp_path):
    seed = seed_graph_path("babyai").parent
    args = ["experiment", "run", str(seed), "--tier", "smoke", "--episodes", "2", "--workers", "1", "--json"]
    cand = json.loads(CliRunner().invoke(main, args + ["--out", str(tmp_path / "cand")]).stdout)
    first = CliRunner().invoke(main, args + ["--oracle", "--out", str(tmp_path / "oracle")])
    assert first.exit_code == 0, first.output
    oracle = json.loads(first.stdout)
    assert oracle["oracle"] is True and cand["oracle"] is False
    metrics = json.loads((tmp_path / "oracle" / "metrics.json").read_text())
    assert validate_instance("metrics", metrics) == []
    cand_metrics = json.loads((tmp_path / "cand" / "metrics.json").read_text())
    assert [r["episode_id"] for r in metrics["episodes"]] == [r["episode_id"] for r in cand_metrics["episodes"]]
    assert all(r["steps"] > 0 and r["log"] for r in metrics["episodes"])
    for record in metrics["episodes"]:  # logged like any other episode: header, then one firing per action
        header, firings = read_log(tmp_path / "oracle" / record["log"])
        assert header["episode"]["episode_id"] == record["episode_id"]
        assert header["result"]["success"] == record["success"]
        assert [f["tick"] for f in firings] == list(range(record["steps"]))
        assert {f["node"] for f in firings} == {"oracle"} and firings[-1]["outputs"]["action"] == "done"
    again = json.loads(CliRunner().invoke(main, args + ["--oracle", "--out", str(tmp_path / "o2")]).stdout)
    assert again["cached"] == 0


def test_oracle_results_go_under_the_runs_folder_the_environment_names(tmp_path, monkeypatch):
    """Without --out, experiment run writes under $ARCHITECT_RESULTS_DIR, else <runs>/_experiments
    with the runs folder $ARCHITECT_RUNS_DIR (not the checkout's ./runs)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARCHITECT_RESULTS_DIR", raising=False)
    monkeypatch.setenv("ARCHITECT_RUNS_DIR", str(tmp_path / "elsewhere"))
    result = CliRunner().invoke(main, ["experiment", "run", "babyai", "--tier", "smoke", "--episodes", "1",
                                       "--workers", "1", "--oracle", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["metrics_path"].startswith(str(tmp_path / "elsewhere" / "_experiments"))
    assert out["metrics_path"].endswith("smoke-oracle/metrics.json") and not (tmp_path / "runs").exists()
    assert len(list((tmp_path / "elsewhere" / "_experiments").glob("*/smoke-oracle/episodes/*.jsonl"))) == 1

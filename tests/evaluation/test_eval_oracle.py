"""--oracle: the executor's ceiling agent on the same episodes as the candidate."""

from __future__ import annotations

import json

from click.testing import CliRunner

from harness.executor_api import seed_graph_path
from harness.cli import main
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
    assert all(r["steps"] > 0 and r["log"] is None for r in metrics["episodes"])
    again = json.loads(CliRunner().invoke(main, args + ["--oracle", "--out", str(tmp_path / "o2")]).stdout)
    assert again["cached"] == 0

"""The report tests' real runs, built once: random search over BabyAI (2
iterations on a few episodes, certified), random search over MapGPT's
heuristic seed on R2R, and KDLoop's seed iteration on BabyAI."""

from __future__ import annotations

from pathlib import Path

import pytest
from reportkit import architect_json


@pytest.fixture(scope="session")
def report_run(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("report-runs")
    # two episodes of one level, which the random proposer's first edits change (gained / lost episodes to replay)
    search = runs / "search2.jsonl"
    search.write_text('{"level": "BabyAI-GoToSeq-v0", "seed": 1000}\n{"level": "BabyAI-GoToSeq-v0", "seed": 1001}\n')
    code, payload = architect_json("loop", "random", "babyai", "--iterations", "2", "--run-id", "searched",
                                   "--runs-dir", str(runs), "--smoke-episodes", "1", "--episodes", str(search),
                                   "--holdout-episodes", "2")
    assert code == 0, payload
    return Path(payload["run"])


@pytest.fixture(scope="session")
def nav_run(report_run) -> Path:
    """Random search over MapGPT's heuristic seed on R2R (1 iteration, 2 episodes), beside report_run."""
    from executors.mp3d import data_r2r

    if not data_r2r.complete():
        pytest.skip("needs the r2r data set in the data folder (architect data fetch r2r)")
    code, payload = architect_json("loop", "random", "mapgpt-heuristic", "--iterations", "1", "--run-id", "nav",
                                   "--runs-dir", str(report_run.parent), "--smoke-episodes", "1",
                                   "--eval-episodes", "2", "--no-certify")
    assert code == 0, payload
    return Path(payload["run"])


@pytest.fixture(scope="session")
def kdloop_run(report_run) -> Path:
    """A KDLoop run on BabyAI as its skill starts one: `architect init` commits the evaluated seed."""
    code, payload = architect_json("init", "kdloop", "babyai", "--run-id", "kd", "--runs-dir",
                                   str(report_run.parent), "--smoke-episodes", "1", "--eval-episodes", "2")
    assert code == 0, payload
    return report_run.parent / "kd"

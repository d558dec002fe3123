"""One real run (random search over BabyAI, 2 iterations on a few episodes),
built once for the report tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from reportkit import architect_json


@pytest.fixture(scope="session")
def report_run(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("report-runs")
    code, payload = architect_json("loop", "random", "babyai", "--iterations", "2", "--run-id", "searched",
                                   "--runs-dir", str(runs), "--smoke-episodes", "1", "--eval-episodes", "2")
    assert code == 0, payload
    return Path(payload["run"])

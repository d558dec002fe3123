"""One real run (random search over BabyAI, 2 iterations on a few episodes),
built once for the report tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main


def architect_json(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(main, [*args, "--json"], catch_exceptions=False)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one JSON line on stdout, got: {result.stdout!r}"
    return result.exit_code, json.loads(lines[0])


@pytest.fixture(scope="session")
def report_run(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("report-runs")
    code, payload = architect_json("loop", "random", "babyai", "--iterations", "2", "--run-id", "searched",
                                   "--runs-dir", str(runs), "--smoke-episodes", "1", "--eval-episodes", "2")
    assert code == 0, payload
    return Path(payload["run"])

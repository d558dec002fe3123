"""Shared fixtures: one small BabyAI run initialised per session and copied per
test (a run directory is a self-contained git repository, so a copy is a
faithful, independent run)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from rundir_kit import SMALL, cli


@pytest.fixture(scope="session")
def base_run(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("base-runs")
    payload = cli("init", "random", "babyai", "--run-id", "base", "--runs-dir", str(runs), "--max-iterations", "40",
                  "--seed", "7", *SMALL)
    return Path(payload["run"])


@pytest.fixture
def run_dir(base_run: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "runs" / "r"
    shutil.copytree(base_run, dest)
    return dest


@pytest.fixture
def subprocess_env() -> dict:
    return dict(os.environ)

"""Shared fixtures: one small BabyAI run initialised per session and copied per
test (a run directory is a self-contained git repository, so a copy is a
faithful, independent run)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from rundir_kit import SMALL, cli


@pytest.fixture(scope="session", autouse=True)
def result_cache(tmp_path_factory):
    """A private evaluation cache: repeated candidates are cheap, the user's cache untouched."""
    old = os.environ.get("ARCHITECT_CACHE_DIR")
    os.environ["ARCHITECT_CACHE_DIR"] = str(tmp_path_factory.mktemp("result-cache"))
    yield
    if old is None:
        os.environ.pop("ARCHITECT_CACHE_DIR", None)
    else:
        os.environ["ARCHITECT_CACHE_DIR"] = old


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

"""Every test runs against private folders: the result cache, default result
and run folders live under one session tmp dir, never in the user's home or
the checkout, and no operator override of model mode or cassette leaks in."""

import tempfile
from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def private_architect_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("architect")
    patch = pytest.MonkeyPatch()
    patch.setenv("ARCHITECT_CACHE_DIR", str(root / "cache"))
    patch.setenv("ARCHITECT_RESULTS_DIR", str(root / "results"))
    patch.setenv("ARCHITECT_RUNS_DIR", str(root / "runs"))
    patch.delenv("ARCHITECT_MODEL_MODE", raising=False)
    patch.delenv("ARCHITECT_CASSETTE", raising=False)
    patch.delenv("ARCHITECT_MODEL_BASE_URL", raising=False)
    patch.delenv("ARCHITECT_TIER_EPISODES", raising=False)
    # A run's commands would leave warm forkservers behind, one per test's run (they idle
    # out after minutes); tests/evaluation/test_eval_warm.py turns them on.
    patch.setenv("ARCHITECT_WARM_FORKSERVER", "0")
    yield root
    patch.undo()


@pytest.fixture
def runtime_dir():
    """An empty private folder for $XDG_RUNTIME_DIR, short-named in the temp folder: a warm
    server's socket path must fit AF_UNIX's 107 bytes, which a numbered pytest tmp_path can pass."""
    with tempfile.TemporaryDirectory(prefix="xdg-") as folder:
        yield Path(folder)

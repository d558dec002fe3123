"""Fixtures of the evaluation tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def eval_env(tmp_path, monkeypatch):
    """Result cache and default result folders under tmp, never in the user's home."""
    monkeypatch.setenv("ARCHITECT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ARCHITECT_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.delenv("ARCHITECT_MODEL_MODE", raising=False)
    return tmp_path


@pytest.fixture(autouse=True)
def trusted_test_nodesets(monkeypatch):
    """The candidates of these tests misbehave on purpose (hang, kill their
    worker, sleep), which needs `os` and `time`: their nodeset runs as plain
    Python here. Restricted loading is tested in tests/canvas/test_canvas_restricted.py."""
    monkeypatch.setenv("ARCHITECT_TRUSTED_NODESETS", "1")

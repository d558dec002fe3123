"""Fixtures for the executor tests: real minigrid envs, the Matterport3D data fixture, no stubs."""

from __future__ import annotations

import json

import pytest
from babyai_testkit import SEED_GRAPH, FakeCtx

from harness import PROJECT_ROOT


@pytest.fixture
def ctx():
    return FakeCtx()


@pytest.fixture
def seed_graph() -> dict:
    return json.loads(SEED_GRAPH.read_text())


@pytest.fixture
def fixture_data(monkeypatch):
    """The Matterport3D test fixture (tests/fixtures/mp3d) as the data folder."""
    monkeypatch.setenv("ARCHITECT_DATA_DIR", str(PROJECT_ROOT / "tests" / "fixtures" / "mp3d"))

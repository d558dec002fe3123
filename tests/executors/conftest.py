"""Fixtures for the BabyAI executor tests: real minigrid envs, no stubs."""

from __future__ import annotations

import json

import pytest
from babyai_testkit import SEED_GRAPH, FakeCtx


@pytest.fixture
def ctx():
    return FakeCtx()


@pytest.fixture
def seed_graph() -> dict:
    return json.loads(SEED_GRAPH.read_text())

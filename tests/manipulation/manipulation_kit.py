"""Helpers for the manipulation tests: seed graphs, candidates wired to loopback servers."""

from __future__ import annotations

import json

from loopback_kit import candidate_on_loopback  # noqa: F401 - re-exported for the manipulation tests
from harness import SEEDS_DIR

SEEDS = SEEDS_DIR


def seed_graph(name: str) -> dict:
    return json.loads((SEEDS / name / "graph.json").read_text())

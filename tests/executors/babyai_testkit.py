"""Helpers for the BabyAI executor tests (a unique module name: every test folder has a conftest)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import executors.babyai  # noqa: F401  (sets BABYAI_DONE_ACTIONS before minigrid's verifier loads)

ROOT = Path(__file__).resolve().parents[2]
SEED_GRAPH = ROOT / "seeds" / "babyai" / "graph.json"


class FakeCtx:
    """The part of the canvas Context the BabyAI nodes use."""

    def __init__(self, seed: int = 0):
        self.tick = 0
        self.episode = {}
        self.rng = np.random.default_rng(seed)
        self.logged: dict = {}

    def log(self, **fields):
        self.logged.update(fields)


def make_node(type_name: str, config: dict | None = None, node_id: str = "n"):
    from harness.canvas.registry import default_registry

    nt = default_registry().get(type_name)
    assert nt is not None, f"{type_name} is not registered"
    node = nt.cls(node_id, config or {})
    node.setup()
    return node

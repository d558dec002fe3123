"""Helpers for the LIBERO tests: seed graphs and episodes."""

from __future__ import annotations

import json

from harness import SEEDS_DIR

SEEDS = SEEDS_DIR
CAPS = {"libero_spatial": 220, "libero_object": 280, "libero_goal": 300, "libero_10": 520}


def seed_graph(name: str) -> dict:
    return json.loads((SEEDS / name / "graph.json").read_text())


def episode(suite: str, task: int, init_state: int, max_steps: int | None = None) -> dict:
    return {"suite": suite, "task": task, "init_state": init_state, "episode_id": f"{suite}:{task}:{init_state}",
            "max_steps": max_steps or CAPS[suite]}

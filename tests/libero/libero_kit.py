"""Helpers for the LIBERO tests: seed graphs and episodes."""

from __future__ import annotations

import ctypes.util
import json
import os

import pytest

from harness import SEEDS_DIR

SEEDS = SEEDS_DIR
CAPS = {"libero_spatial": 220, "libero_object": 280, "libero_goal": 300, "libero_10": 520}


def seed_graph(name: str) -> dict:
    return json.loads((SEEDS / name / "graph.json").read_text())


def episode(suite: str, task: int, init_state: int, max_steps: int | None = None) -> dict:
    return {"suite": suite, "task": task, "init_state": init_state, "episode_id": f"{suite}:{task}:{init_state}",
            "max_steps": max_steps or CAPS[suite]}


def rendering_available() -> bool:
    """Whether MuJoCo's offscreen renderer can load the backend MUJOCO_GL names (EGL by default),
    on Mesa's software renderer where there is no GPU."""
    backend = os.environ.get("MUJOCO_GL", "egl")
    return bool(ctypes.util.find_library("OSMesa") if backend == "osmesa" else ctypes.util.find_library("EGL_mesa"))


needs_rendering = pytest.mark.skipif(
    not rendering_available(),
    reason="no Mesa EGL/OSMesa for MuJoCo's cameras: apt-get install -y libegl1 libegl-mesa0 libgl1-mesa-dri "
           "libosmesa6 (README, set-up)")

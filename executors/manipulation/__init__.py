"""Manipulation executor on robosuite (MuJoCo): simulator node, the VoxPoser LMP
chain and the VLM-planner + VLA policy nodes, and adapters for VLABench and LIBERO."""

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent

from executors.manipulation.nodes import simulator, vla, voxposer  # noqa: E402,F401
from executors.manipulation.adapters import libero, vlabench  # noqa: E402,F401

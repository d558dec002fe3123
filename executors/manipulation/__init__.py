"""Manipulation executor on robosuite (MuJoCo): simulator node, the VoxPoser LMP
chain and the VLM-planner + VLA policy nodes, and adapters for VLABench and LIBERO."""

from executors.manipulation.nodes import simulator, vla, voxposer  # noqa: F401

"""Registers the smartway node types (SmartWay's navigator chain on the Matterport3D graphs)."""

from executors.smartway.nodes import control, instruction, perception, reasoning, simulator  # noqa: F401

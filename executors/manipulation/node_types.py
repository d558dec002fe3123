"""Registers the manipulation node types (imported on first use of a `manipulation.*` type)."""

from executors.manipulation.adapters import vlabench  # noqa: F401
from executors.manipulation.nodes import simulator, vla, voxposer  # noqa: F401

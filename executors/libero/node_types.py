"""Registers the LIBERO node types (imported on first use of a `libero.*` type)."""

from executors.libero.nodes import motion, pi0, simulator, voxposer  # noqa: F401

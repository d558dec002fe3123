"""Registers the eqa node types (ExploreEQA's chain on the Matterport3D graphs and its model-free parts)."""

from executors.eqa.nodes import answer, explore, mapping, observe, simulator, stopping  # noqa: F401

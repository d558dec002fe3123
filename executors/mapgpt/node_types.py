"""Registers the mapgpt node types (MapGPT's module chain and its alternatives)."""

from executors.mapgpt.nodes import action, candidates, memory, parser, planner, prompt, simulator, vision  # noqa: F401

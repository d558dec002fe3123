"""The mapgpt node alphabet: MapGPT's module chain, one node type per module."""

from executors.mapgpt.nodes import action, candidates, memory, parser, planner, prompt, simulator, vision  # noqa: F401

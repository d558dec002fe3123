"""Registers the mapgpt node types (MapGPT's module chain and its alternatives)."""

from executors.mapgpt.nodes import (action, candidates, gating, memory, parser, planner, prompt,  # noqa: F401
                                     simulator, vision)

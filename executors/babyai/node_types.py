"""Registers the BabyAI node types (imported on first use of a `babyai.*` type).

Explicit STOP is guaranteed by `envs` (see executors/babyai/__init__.py).
"""

from executors.babyai.nodes import control, exploration, language, memory, perception, simulator  # noqa: F401

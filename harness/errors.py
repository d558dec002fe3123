"""The error types every layer raises; the ground floor (imports nothing of ours).

`UserError` is bad input from the user: the CLI reports it as one line (or a
JSON object with "ok": false) and a non-zero exit, never a traceback. Library
modules raise these; only `harness.cli` turns them into output.

Vocabulary (one meaning per word):
- *executor*: the environment package (simulator node, node types, profile,
  seeds), e.g. `babyai`. The searched agent is the *candidate* (agent graph).
- *executor profile*: an executor's `profile.yaml` (tiers, metrics, budgets,
  edit whitelist).
- *inference profile*: a model-serving YAML under profiles/ (backend, model,
  sampling).
"""

from __future__ import annotations

from typing import Any


class UserError(Exception):
    """Bad input from the user: reported as a one-line message, no traceback."""

    def __init__(self, message: str, *, details: Any = None, exit_code: int = 2):
        super().__init__(message)
        self.message = message
        self.details = details
        self.exit_code = exit_code


class ExecutorError(UserError, LookupError):
    """Unknown executor, seed or tier, or a broken executor package."""


class ExecutorProfileError(UserError, ValueError):
    """An executor profile.yaml that is unreadable or violates schemas/profile.schema.json."""


class InferenceProfileError(UserError):
    """An inference profile that is missing, malformed or has a bad key."""


class VariantError(UserError, LookupError):
    """Unknown search variant, or a variant that cannot do what was asked."""

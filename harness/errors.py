"""The error types every layer raises; the ground floor (imports nothing of ours)."""

from __future__ import annotations

from typing import Any


class UserError(Exception):
    """Bad input from the user: reported as a one-line message, no traceback."""

    def __init__(self, message: str, *, details: Any = None, exit_code: int = 2):
        super().__init__(message)
        self.message = message
        self.details = details
        self.exit_code = exit_code

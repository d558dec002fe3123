"""Environment variables set for the duration of a block."""

from __future__ import annotations

import contextlib
import os


@contextlib.contextmanager
def temporary_environ(**values: str):
    """`values` set in os.environ inside the block; afterwards each variable is
    back to its value before (or unset again)."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

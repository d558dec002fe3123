"""Options and error handling shared by the run-directory commands."""

from __future__ import annotations

import functools
from pathlib import Path

import click

from harness.cli.output import UserError, fail

JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object on stdout.")
RUNS_DIR_OPTION = click.option(
    "--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Folder holding run directories (default: $ARCHITECT_RUNS_DIR or ./runs).")


def handled(fn):
    """Turn UserError into the shared one-line error / JSON error convention."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except UserError as exc:
            fail(exc, kwargs.get("as_json", False))

    return wrapper

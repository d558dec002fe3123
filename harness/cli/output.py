"""Shared output conventions for subcommands.

`--json`: exactly one JSON object on stdout. Errors: a clear message on stderr
(or a JSON object with "ok": false) and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import click

from harness.errors import UserError

__all__ = ["UserError", "emit", "fail"]


def emit(payload: dict[str, Any], as_json: bool, human: str | None = None) -> None:
    """Print the result: the JSON object, or the human-readable text."""
    if as_json:
        click.echo(json.dumps(payload, default=str))
    elif human is not None:
        click.echo(human)
    else:
        click.echo(json.dumps(payload, indent=2, default=str))


def fail(error: UserError, as_json: bool) -> NoReturn:
    """Report a UserError the way the output mode asks for and exit."""
    if as_json:
        body: dict[str, Any] = {"ok": False, "error": error.message}
        if error.details is not None:
            body["details"] = error.details
        click.echo(json.dumps(body, default=str))
    else:
        click.echo(f"error: {error.message}", err=True)
    sys.exit(error.exit_code)

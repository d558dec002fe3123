"""The conventions every `architect` command follows, a plug-in's commands included.

`--json` (`JSON_OPTION`): exactly one JSON object on stdout, always with an
`ok` key (`emit` adds `"ok": true` when the command did not set it); progress
goes to stderr. `"ok": false` means the command failed (an error, or a check
whose verdict is failure) and the exit code is non-zero; a command's verdict
keys (`valid`, `verdict`, ...) say the rest. Errors (`handled`): a `UserError` from the library, or a file the
operating system or the JSON parser could not read, becomes one line on stderr
(with `--json`: a JSON object with `"ok": false`) and a non-zero exit code,
never a traceback. A plug-in's command module (a variant's `cli.py`) imports
this module and nothing else of `harness.cli`.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from harness.errors import UserError
from harness.fileio import InputError

__all__ = ["JSON_OPTION", "RUNS_DIR_OPTION", "RUN_ARGUMENT", "STAGING_ARGUMENT", "UserError", "emit", "fail",
           "handled", "lines_of", "progress_say", "rounded"]

JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object on stdout.")
RUNS_DIR_OPTION = click.option(
    "--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Folder holding run directories (default: $ARCHITECT_RUNS_DIR or ./runs).")
RUN_ARGUMENT = click.argument("run", metavar="RUN")
STAGING_ARGUMENT = click.argument("staging", metavar="STAGING")


def emit(payload: dict[str, Any], as_json: bool, human: str | None = None) -> None:
    """Print the result: the JSON object (with `ok`, see the module doc), or the human-readable text."""
    if "ok" not in payload:
        payload = {"ok": True, **payload}
    if as_json:
        click.echo(json.dumps(payload, default=str))
    elif human is not None:
        click.echo(human)
    else:
        click.echo(json.dumps(payload, indent=2, default=str))


def rounded(value: Any, digits: int = 6) -> Any:
    """`value` with every float at `digits` significant digits (0.20000000000000004 -> 0.2), for
    printed statistics; the files keep the raw values."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v, digits) for v in value]
    return value


def lines_of(payload: dict[str, Any]) -> str:
    """The human text of a flat result: one `key: value` line per key."""
    return "\n".join(f"{k}: {v}" for k, v in payload.items())


def fail(error: UserError, as_json: bool) -> NoReturn:
    """Report a UserError the way the output mode asks for and exit."""
    if as_json:
        body: dict[str, Any] = {"ok": False, "error": error.message, "kind": type(error).__name__}
        if error.details is not None:
            body["details"] = error.details
        click.echo(json.dumps(body, default=str))
    else:
        click.echo(f"error: {error.message}", err=True)
    sys.exit(error.exit_code)


def handled(command):
    """The one error decorator: UserError and unreadable files -> `fail` (see the module doc)."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        as_json = kwargs.get("as_json", False)
        try:
            return command(*args, **kwargs)
        except UserError as error:
            fail(error, as_json)
        except FileNotFoundError as error:
            fail(InputError(f"{error.filename or error}: not found; check the path"), as_json)
        except (OSError, json.JSONDecodeError) as error:
            fail(InputError(f"{type(error).__name__}: {error}; check the file and its permissions"), as_json)

    return wrapper


def progress_say():
    """A `say(text)` that writes progress lines to stderr (stdout carries the one JSON object)."""
    from harness.rundir.loop import Progress

    return Progress(enabled=True).say

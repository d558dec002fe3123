"""The CLI conventions hold once for every command, the plug-ins' included:
one `--json` option, one error decorator, command functions short enough to
read (the work lives in library functions behind them)."""

from __future__ import annotations

import inspect

import click
import pytest

from harness.cli import main
from harness.cli.conventions import JSON_OPTION, handled

MAX_COMMAND_LINES = 60


def commands(group: click.Group = main, path: tuple[str, ...] = ()):
    for name in group.list_commands(click.Context(group)):
        command = group.get_command(click.Context(group), name)
        if isinstance(command, click.Group):
            yield from commands(command, path + (name,))
        elif command.callback is not None:
            yield " ".join(path + (name,)), command


ALL = dict(commands())
JSON_HELP = JSON_OPTION(click.Command("probe")).params[0].help


def test_the_walk_finds_the_plugin_groups_too():
    assert {"validate", "loop", "data fetch", "kdloop pick", "shaper propose", "random propose"} <= set(ALL)


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_command_follows_the_conventions(name):
    command = ALL[name]
    json_options = [p for p in command.params if "--json" in getattr(p, "opts", ())]
    assert len(json_options) == 1, f"{name}: takes no --json"
    assert json_options[0].name == "as_json" and json_options[0].help == JSON_HELP, f"{name}: its own --json"
    assert command.callback.__code__ is handled(lambda: None).__code__, f"{name}: not wrapped by conventions.handled"
    function = inspect.unwrap(command.callback)
    lines, _ = inspect.getsourcelines(function)
    body = len(lines) - next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))
    assert body <= MAX_COMMAND_LINES, f"{name}: {function.__qualname__} is {body} lines"

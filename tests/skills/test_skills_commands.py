"""Every `architect …` line written in a skill parses against the real click CLI
(subcommand chain resolved, options and arguments checked) without running it."""

import warnings
from pathlib import Path

import click
import pytest

from harness.cli import main
from skillpack import command_lines, skill_files, split, substitute

LINES = [(path, line) for path in skill_files() for line in command_lines(split(path)[1])]


def parse(argv: list[str]) -> list[str]:
    """Resolve the chain of groups and parse the leaf; returns the command path."""
    ctx = main.make_context("architect", list(argv), resilient_parsing=False)
    command, chain = main, []
    while isinstance(command, click.Group):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            rest = [*getattr(ctx, "protected_args", []), *ctx.args]
        name, command, args = command.resolve_command(ctx, rest)
        chain.append(name)
        ctx = command.make_context(name, args, parent=ctx, resilient_parsing=False)
    return chain


def _materialise(argv: list[str]) -> None:
    # Path-like dummy arguments exist, so options declared with exists=True accept them.
    for token in argv:
        if token.startswith("runs/"):
            path = Path(token)
            if path.suffix:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("{}")
            else:
                path.mkdir(parents=True, exist_ok=True)


def test_the_skills_use_the_cli_at_all():
    assert len(LINES) >= 40
    used = {line.split()[1] for _, line in LINES}
    assert {"init", "status", "stage", "check", "smoke", "evaluate", "commit", "discard", "log",
            "fitness", "adas", "aflow", "kdloop", "nodes", "patch", "random"} <= used, used


@pytest.mark.parametrize("path,line", LINES, ids=[f"{p.stem}:{l[:60]}" for p, l in LINES])
def test_command_line_is_accepted_by_the_cli(path, line, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = substitute(line)[1:]
    _materialise(argv)
    try:
        chain = parse(argv)
    except click.UsageError as exc:
        pytest.fail(f"{path.name}: `{line}` is rejected by the CLI: {exc.format_message()}")
    except click.exceptions.Exit:
        pytest.fail(f"{path.name}: `{line}` only prints help")
    assert chain and chain[0] == line.split()[1]


def test_parse_really_rejects_bad_lines(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for bad in (["kdloop", "delete", "r1", "knowledge"],           # missing --line
                ["aflow", "select", "r1", "--sed", "1"],            # unknown option
                ["kdloop", "append", "r1", "notes", "--text", "x"],  # bad choice
                ["stage", "r1", "--parent", "x"]):                  # not an int
        with pytest.raises(click.UsageError):
            parse(bad)

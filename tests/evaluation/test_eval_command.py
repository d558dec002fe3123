"""The /experiment:run Claude Code command is well-formed and calls the real CLI."""

from __future__ import annotations

import shlex

import yaml
from click.testing import CliRunner

from harness import PROJECT_ROOT
from harness.cli import main

COMMAND = PROJECT_ROOT / ".claude" / "commands" / "experiment" / "run.md"


def test_front_matter_and_the_command_it_runs():
    text = COMMAND.read_text()
    _, front, body = text.split("---", 2)
    meta = yaml.safe_load(front)
    assert meta["arguments"] == ["candidate", "tier"]
    assert meta["allowed-tools"] == "Bash(architect *)"
    assert meta["description"] and meta["argument-hint"]
    assert ":" not in str(meta.get("name", ""))
    line = next(x.strip() for x in body.splitlines() if x.strip().startswith("architect experiment run"))
    assert line == "architect experiment run $candidate --tier $tier --json"
    # the options it uses exist: --help of the same command line parses
    args = shlex.split(line.replace("$candidate", "seeds/babyai").replace("$tier", "smoke"))[1:]
    result = CliRunner().invoke(main, args[:-1] + ["--help"])
    assert result.exit_code == 0 and "--tier" in result.output and "--json" in result.output
    assert "metrics_path" in body and "episodes_dir" in body

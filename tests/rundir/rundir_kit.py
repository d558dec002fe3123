"""Helpers shared by the run-directory tests (imported by name; conftest.py only holds fixtures)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from harness.cli import main

# Cheap evaluation: 2 smoke and 3 search episodes of the real profile (round-robin over their levels).
SMALL = ["--smoke-episodes", "2", "--eval-episodes", "3"]
ARCHITECT = [sys.executable, "-c", "from harness.cli import main; main()"]


def cli(*args: str, ok: bool = True) -> dict:
    """Run `architect ARGS --json` in-process and return its one JSON object."""
    result = CliRunner().invoke(main, [*args, "--json"], catch_exceptions=False)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one JSON line on stdout, got: {result.stdout!r}"
    payload = json.loads(lines[0])
    if ok:
        assert result.exit_code == 0, payload
    payload["_exit_code"] = result.exit_code
    return payload


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def iteration_commits(root: Path) -> list[int]:
    out = git(root, "log", "--reverse", "--format=%(trailers:key=Architect-Iteration,valueonly)%x00")
    return [int(v) for v in (s.strip() for s in out.split("\x00")) if v.isdigit()]

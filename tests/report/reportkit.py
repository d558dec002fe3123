"""Helpers of the report tests (imported by name; conftest.py only holds fixtures)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from harness.cli import main


def architect_json(*args: str) -> tuple[int, dict]:
    """Run `architect ARGS --json` in-process: (exit code, its one JSON object)."""
    result = CliRunner().invoke(main, [*args, "--json"], catch_exceptions=False)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one JSON line on stdout, got: {result.stdout!r}"
    return result.exit_code, json.loads(lines[0])

"""A scripted stand-in for a headless coding agent given `/architect:iterate
<variant> <executor>` (Claude Code cannot run here): it does what iterate.md
says for the random variant, with nothing but the run's files and the CLI.
`architect drive` starts it once per iteration, as it would start `claude -p`."""

from __future__ import annotations

import json
import sys

from click.testing import CliRunner

from harness.cli import main as architect_main


def architect(*args: str, ok: bool = True) -> dict:
    """`architect ARGS --json` (in this process: one interpreter start per session)."""
    result = CliRunner().invoke(architect_main, [*args, "--json"], catch_exceptions=False)
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    if ok and result.exit_code != 0:
        sys.exit(f"architect {' '.join(args)} failed: {result.stdout}")
    return payload


def main(prompt: str) -> None:
    command, variant, executor, *options = prompt.split()
    assert command == "/architect:iterate", prompt
    run = f"{variant}-{executor}"
    status = architect("status", run, ok=False)
    if not status.get("ok", True):
        architect("init", variant, executor, "--run-id", run, "--smoke-episodes", "1", "--eval-episodes", "2",
                  "--max-iterations", "2", *options)
        status = architect("status", run)
    if status["stop"] is not None:
        architect("end", run)
        return
    staging = architect("stage", run)["staging"]
    architect("random", "propose", run, staging)
    if not architect("check", run, staging, ok=False)["ok"] or not architect("smoke", run, staging, ok=False)["passed"]:
        architect("discard", run, staging, "--reason", "random: failed")
        return
    architect("evaluate", run, staging)
    architect("fitness", run, staging)
    architect("commit", run, staging)


if __name__ == "__main__":
    main(sys.argv[-1])

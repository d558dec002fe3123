"""The fresh-context driver: one headless coding-agent session per iteration.

Each session gets the prompt `/architect:iterate <variant> <executor> [options]`
(the options configure the run the first session creates) and
reads everything it needs from the run's files (the skill
.claude/commands/architect/iterate.md). Between sessions the driver checks the
run's stop conditions (harness.rundir.stopping) and, when one holds, records
why the run stopped (`architect end`). The agent command is a parameter
(`claude -p ...` for real; a scripted stand-in in the tests)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from harness.errors import UserError
from harness.rundir import ledger, state, stopping
from harness.rundir.layout import RunPaths
from harness.rundir.records import read_manifest

PROMPT = "/architect:iterate {variant} {executor}"
# Sessions in a row that end without a new ledger row before the driver gives up.
MAX_IDLE_SESSIONS = 2


def agent_argv(agent_command: str, prompt: str) -> list[str]:
    """The agent command split like a shell would; `{prompt}` in it is replaced,
    else the prompt is its last argument."""
    argv = shlex.split(agent_command)
    if not argv:
        raise UserError("--agent-command is empty: give e.g. \"claude -p --allowedTools 'Bash(architect *) Read Write Edit Glob Grep Agent'\"")
    if shutil.which(argv[0]) is None:
        raise UserError(f"--agent-command: {argv[0]!r} is not an executable on PATH: install the agent "
                        "(Claude Code: `npm install -g @anthropic-ai/claude-code`) or give the full path of another")
    if any("{prompt}" in a for a in argv):
        return [a.replace("{prompt}", prompt) for a in argv]
    return [*argv, prompt]


def _attempts(paths: RunPaths) -> int:
    return len(ledger.read_rows(paths.ledger)) if paths.ledger.exists() else 0


def drive(variant: str, executor: str, *, agent_command: str, runs_dir: Path, run_id: str | None = None,
          max_sessions: int = 100, options: list[str] = (), say=lambda msg: None) -> dict:
    """Run sessions until a stop condition holds, the agent stops the run, or it stalls.
    `options`: words appended to the prompt (`--max-iterations N`, `--tier T`)."""
    run_id = run_id or f"{variant}-{executor}"
    paths = RunPaths(Path(runs_dir).resolve() / run_id)
    prompt = " ".join([PROMPT.format(variant=variant, executor=executor), *options])
    argv = agent_argv(agent_command, prompt)
    env = dict(os.environ, ARCHITECT_RUNS_DIR=str(Path(runs_dir).resolve()))
    sessions, idle, reason = [], 0, None
    while True:
        if paths.manifest.exists():
            manifest = read_manifest(paths)
            if manifest["variant"] != variant:
                raise UserError(f"run {run_id} is a {manifest['variant']} run, not {variant}")
            condition = stopping.due(paths, manifest, ledger.read_rows(paths.ledger))
            if condition is not None:
                reason = stopping.end(paths, manifest)["stop_reason"]
                break
            if not sessions and state.read(paths)["status"] == "stopped":
                state.refresh(paths, status="ready", stop_reason=None)  # resumed: "stopped" now means the agent ended it
        if len(sessions) >= max_sessions:
            reason = f"max_sessions: {max_sessions} agent sessions"
            break
        before = _attempts(paths)
        say(f"session {len(sessions) + 1}: {' '.join(shlex.quote(a) for a in argv)}")
        proc = subprocess.run(argv, env=env, cwd=os.getcwd())
        after = _attempts(paths)
        sessions.append({"session": len(sessions) + 1, "exit_code": proc.returncode, "new_attempts": after - before})
        if paths.manifest.exists() and state.read(paths)["status"] == "stopped":
            reason = state.read(paths)["stop_reason"]  # the agent ended the run (`architect end --reason`)
            break
        idle = idle + 1 if after == before else 0
        if idle >= MAX_IDLE_SESSIONS:
            reason = (f"stalled: {idle} agent sessions in a row recorded no attempt "
                      f"(last exit code {proc.returncode})")
            break
    result = {"run": str(paths.root), "run_id": run_id, "sessions": sessions, "stop_reason": reason}
    if paths.manifest.exists():
        current = state.read(paths)
        if current["status"] != "stopped":
            current = stopping.end(paths, read_manifest(paths), reason=reason)["state"]
        result["state"] = current
    return result

"""Ending a skill-driven run (`architect end`) and the fresh-context driver
(`architect drive`): one headless agent session per iteration."""

from __future__ import annotations

import click

from harness.cli.conventions import JSON_OPTION, RUNS_DIR_OPTION, emit, handled


@click.command("end")
@click.argument("run")
@click.option("--reason", default=None,
              help="The variant's own verdict (e.g. \"aflow: converged\"); default: the stop condition that holds.")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def end_cmd(run, reason, runs_dir, as_json):
    """Record that RUN stopped and why: status "stopped", stop_reason (the STOP
    file's text, the cap or skip limit reached, or --reason), committed
    (`commit`: that commit's hash).

    Without --reason and with no stop condition holding, nothing changes
    (`stopped: false`). A STOP file is consumed (a later resume continues)."""
    from harness.rundir import gitops, ledger
    from harness.rundir.layout import resolve_run
    from harness.rundir.lock import run_lock
    from harness.rundir.records import read_manifest
    from harness.rundir.status import best_with_runner_up, runner_up_text
    from harness.rundir.stopping import end

    paths = resolve_run(run, runs_dir)
    with run_lock(paths.lock):
        result = end(paths, read_manifest(paths), reason=reason)
        best = result["state"]["best"] = best_with_runner_up(paths, result["state"]["best"],
                                                             ledger.read_rows(paths.ledger))  # as the status shows it
    human = f"stopped: {result['stop_reason']}" if result["stopped"] else result["message"]
    if best:
        human += f"\nbest: iteration {best['iteration']} score {best['score']}" + runner_up_text(best)
    emit(dict(result, ok=True, run=str(paths.root), commit=gitops.head(paths.root) if result["stopped"] else None),
         as_json, human=human)


@click.command("drive")
@click.argument("variant")
@click.argument("executor")
@click.option("--agent-command", required=True,
              help="The headless agent, e.g. \"claude -p --allowedTools 'Bash(architect *) Read Write Edit Glob Grep "
                   "Agent'\"; the prompt `/architect:iterate VARIANT EXECUTOR` is appended (or replaces {prompt}).")
@click.option("--run-id", default=None, help="Run folder name (default: VARIANT-EXECUTOR, as the skills use).")
@click.option("--max-sessions", type=click.IntRange(min=1), default=100, show_default=True,
              help="At most this many agent sessions.")
@click.option("--max-iterations", type=click.IntRange(min=0), default=None,
              help="Passed on in the prompt: the iteration cap of the run the first session creates "
                   "(of an existing run: lowered in its goal.md).")
@click.option("--tier", default=None, metavar="TIER",
              help="Passed on in the prompt: the tier the new run is evaluated on (see `architect init --help`).")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def drive_cmd(variant, executor, agent_command, run_id, max_sessions, max_iterations, tier, runs_dir, as_json):
    """Run VARIANT on EXECUTOR with a fresh agent context per iteration.

    Starts the agent command once per iteration with `/architect:iterate
    VARIANT EXECUTOR` (the first session also creates the run), until the run's
    stop conditions hold (STOP file, iteration cap, skips, cost or token cap),
    the agent ends the run, or two sessions in a row record no attempt. Then
    records why the run stopped; certifying is left to `architect certify`
    (the JSON's `next`)."""
    from harness.rundir.driver import drive
    from harness.rundir.layout import default_runs_dir
    from harness.variant_api import find_variant

    find_variant(variant)
    options = [*(["--max-iterations", str(max_iterations)] if max_iterations is not None else []),
               *(["--tier", tier] if tier else [])]
    result = drive(variant, executor, agent_command=agent_command, runs_dir=runs_dir or default_runs_dir(),
                   run_id=run_id, max_sessions=max_sessions, options=options,
                   say=lambda msg: click.echo(msg, err=True))
    certify = f"architect certify {result['run']} --dry-run --json"  # (drive certifies nothing: loop.md section 3)
    emit(dict(result, ok=True, next=certify), as_json,
         human=f"{len(result['sessions'])} session(s); stopped: {result['stop_reason']}\nrun: {result['run']}\n"
               f"next: {certify}, then the same without --dry-run")


def register(main: click.Group) -> None:
    """Attach this module's commands to the root group."""
    main.add_command(end_cmd)
    main.add_command(drive_cmd)

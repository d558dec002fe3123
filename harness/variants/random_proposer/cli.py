"""`architect random propose`: one random, statically valid edit of a staged
candidate (the proposer `architect loop random` uses)."""

from __future__ import annotations

import click

from harness.cli.conventions import JSON_OPTION, RUN_ARGUMENT, STAGING_ARGUMENT, emit, handled


@click.group("random")
def random_group():
    """The built-in random proposer, one staged candidate at a time."""


@random_group.command("propose")
@RUN_ARGUMENT
@STAGING_ARGUMENT
@click.option("--seed", type=int, default=None, help="RNG seed (default: the run's manifest seed, else 0).")
@JSON_OPTION
@handled
def random_propose(run, staging, seed, as_json):
    """Apply one random, statically valid edit to STAGING's candidate and fill in
    its proposal.md (the same proposer `architect loop random` uses)."""
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.rundir.ledger import read_rows
    from harness.rundir.records import read_manifest
    from harness.variants.random_proposer.proposer import propose_into

    paths = resolve_run(run)
    folder = resolve_staging(paths, staging)
    if seed is None:
        seed = read_manifest(paths).get("seed") or 0
    result = propose_into(folder, seed, attempt=len(read_rows(paths.ledger)))
    payload = {"staging": str(folder), "description": result.description, "axes": result.axes,
               "move": result.move, "tries": result.tries, "patch": result.patch}
    emit(payload, as_json, result.description)

"""`architect adas …`: the ADAS helpers behind its skill (archive, reflexion history,
debug attempts). Deterministic; all take --json."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.conventions import JSON_OPTION, RUN_ARGUMENT, STAGING_ARGUMENT, UserError, emit, handled, lines_of


@click.group("adas")
def adas_group():
    """ADAS helpers: the archive, the reflexion history, debug attempts."""


@adas_group.command("archive")
@RUN_ARGUMENT
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap resampling.")
@JSON_OPTION
@handled
def adas_archive(run, seed, as_json):
    """Rebuild RUN's archive from every committed iteration.

    Writes memory/archive.json and memory/archive.md (what the proposer reads):
    each candidate's graph, proposal and bootstrap fitness. Nothing is removed.
    """
    from harness.rundir.layout import resolve_run
    from harness.variants.adas import archive as adas

    paths = resolve_run(run)
    result = adas.write_archive(paths, seed)
    emit(result, as_json, f"{result['entries']} entries → {result['archive_md']}")


@adas_group.command("history")
@RUN_ARGUMENT
@STAGING_ARGUMENT
@JSON_OPTION
@handled
def adas_history(run, staging, as_json):
    """Render STAGING/history.md: proposal, reflexion rounds so far, debug errors.

    Both reflexion rounds and every debug retry read this one file.
    """
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.variants.adas import archive as adas

    paths = resolve_run(run)
    result = adas.render_history(paths, resolve_staging(paths, staging))
    emit(result, as_json, result["history"])


@adas_group.command("revise")
@RUN_ARGUMENT
@STAGING_ARGUMENT
@click.option("--round", "round_", type=int, required=True, help="The reflexion round (1 or 2) whose revision to apply.")
@JSON_OPTION
@handled
def adas_revise(run, staging, round_, as_json):
    """Apply reflexion round ROUND's revised proposal to STAGING/proposal.md.

    Takes the text under `## Revised proposal` of STAGING/reflexion-ROUND.md,
    checks its front matter (and that it keeps the staged parent), keeps the
    old proposal as proposal-before-ROUND.md, then re-renders history.md.
    """
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.variants.adas import archive as adas

    paths = resolve_run(run)
    folder = resolve_staging(paths, staging)
    result = adas.apply_revision(folder, round_)
    result["history"] = adas.render_history(paths, folder)
    emit(result, as_json, f"round {round_} applied → {result['proposal']}")


@adas_group.command("debug")
@RUN_ARGUMENT
@STAGING_ARGUMENT
@click.option("--error", "error_text", help="The error text of the failed attempt.")
@click.option("--error-file", type=click.Path(dir_okay=False, path_type=Path),
              help="A file holding the error text (e.g. the saved JSON of `architect smoke`).")
@JSON_OPTION
@handled
def adas_debug(run, staging, error_text, error_file, as_json):
    """Record one failed attempt of STAGING; say whether a retry is left (3 in all)."""
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.variants.adas import archive as adas

    if (error_text is None) == (error_file is None):
        raise UserError("adas debug: give exactly one of --error TEXT or --error-file PATH")
    if error_file is not None:
        error_text = error_file.read_text(encoding="utf-8")
    paths = resolve_run(run)
    result = adas.record_debug(resolve_staging(paths, staging), error_text)
    emit(result, as_json, lines_of(result))

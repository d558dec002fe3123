"""`architect aflow …`: the AFlow helpers behind its skill (parent selection,
experience, duplicate check, convergence). Deterministic; all take --json."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.conventions import JSON_OPTION, RUN_ARGUMENT, STAGING_ARGUMENT, emit, handled, lines_of


@click.group("aflow")
def aflow_group():
    """AFlow helpers: parent selection, experience, duplicate check, convergence."""


@aflow_group.command("select")
@RUN_ARGUMENT
@click.option("--seed", type=int, default=None, help="RNG seed (default: the run's manifest seed, else 0).")
@click.option("--iteration", type=int, default=None,
              help="Iteration the parent is drawn for (default: the run's next iteration).")
@JSON_OPTION
@handled
def aflow_select(run, seed, iteration, as_json):
    """Draw the parent among the top 4 iterations (iteration 0 always in).

    p_i = λ/n + (1−λ)·softmax(α(s_i − s_max)), α=0.2, λ=0.3, scores in percent.
    The same seed and iteration always draw the same parent.
    """
    from harness.rundir.layout import resolve_run
    from harness.variants.aflow import rules as aflow
    from harness.rundir.records import read_manifest

    paths = resolve_run(run)
    if seed is None:
        seed = read_manifest(paths).get("seed") or 0
    if iteration is None:
        from harness.rundir import state

        iteration = state.read(paths)["next_iteration"]
    result = aflow.select_parent(aflow.run_scores_percent(paths), seed=seed, iteration=iteration)
    emit(result, as_json, f"parent: {result['parent']}")


@aflow_group.command("experience")
@RUN_ARGUMENT
@click.option("--parent", type=int, required=True, help="The selected parent iteration.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to render it (default: RUN/memory/experience.md).")
@JSON_OPTION
@handled
def aflow_experience(run, parent, out, as_json):
    """Write memory/experience.json and render PARENT's accepted/rejected modifications."""
    from harness.rundir.layout import resolve_run
    from harness.variants.aflow import rules as aflow

    paths = resolve_run(run)
    result = aflow.write_experience(paths, parent, out)
    emit(result, as_json, result["rendered"])


@aflow_group.command("duplicate")
@RUN_ARGUMENT
@STAGING_ARGUMENT
@JSON_OPTION
@handled
def aflow_duplicate(run, staging, as_json):
    """Is STAGING's proposal a repeat of an earlier one (description; once implemented, the same candidate
    or the same change on the same parent)? The same change on another parent is listed in
    `same_change_as`, not a duplicate. `compared` lists what was compared: the description always;
    `content hash` and `patch` once the candidate differs from its staged parent (`parent`, from
    stage.json); `not_compared` says why the rest was not.

    Counts duplicate hits in the staging folder: `resample` while at most 5
    resamples were used, then `give_up`.
    """
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.variants.aflow import rules as aflow

    paths = resolve_run(run)
    result = aflow.check_duplicate(paths, resolve_staging(paths, staging))
    emit(result, as_json, lines_of(result))


@aflow_group.command("converged")
@RUN_ARGUMENT
@JSON_OPTION
@handled
def aflow_converged(run, as_json):
    """AFlow's stop rule: top-3 mean score unchanged for 5 consecutive iterations."""
    from harness.rundir.layout import resolve_run
    from harness.variants.aflow import rules as aflow

    result = aflow.converged(resolve_run(run))
    emit(result, as_json, f"converged: {result['converged']}")

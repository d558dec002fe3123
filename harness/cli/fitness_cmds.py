"""`architect fitness`: a staged evaluation converted into the run variant's fitness."""

from __future__ import annotations

import click

from harness.cli.conventions import JSON_OPTION, RUN_ARGUMENT, STAGING_ARGUMENT, UserError, emit, handled


@click.command("fitness")
@RUN_ARGUMENT
@STAGING_ARGUMENT
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap resampling.")
@JSON_OPTION
@handled
def fitness_cmd(run, staging, seed, as_json):
    """Convert STAGING's evaluation into the run variant's fitness.

    Reads STAGING/eval/metrics.json (written by `architect evaluate`), applies the
    variant's conversion (adas, kdloop: bootstrap 95% CI of the per-episode
    primary score with 100,000 resamples; aflow, random: mean score in percent)
    and writes STAGING/fitness.json, with the paired verdict against the parent
    on the shared episodes (`vs_parent`: better / worse / indistinguishable,
    exact McNemar for success). A zero score is a result, not an error.
    """
    from harness.fileio import read_json, write_json_atomic
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.rundir.records import read_iteration_metrics, read_manifest
    from harness.variants.fitness import fitness_for

    paths = resolve_run(run)
    folder = resolve_staging(paths, staging)
    metrics_path = folder / "eval" / "metrics.json"
    if not metrics_path.is_file():
        raise UserError(f"{metrics_path}: missing; run `architect evaluate {run} {staging}` first")
    man = read_manifest(paths)
    parent = read_json(folder / "stage.json", "stage record").get("parent")
    result = fitness_for(man["variant"], read_json(metrics_path, "metrics"), seed=seed,
                         primary_metric=man.get("profiles", {}).get("primary_metric"),
                         parent_metrics=read_iteration_metrics(paths, parent) if parent is not None else None)
    result["staging"] = str(folder)
    write_json_atomic(folder / "fitness.json", result)
    human = result["text"] + (f"\nvs parent: {result['vs_parent']['text']}" if "vs_parent" in result else "")
    emit(result, as_json, human)


def register(main: click.Group) -> None:
    main.add_command(fitness_cmd)

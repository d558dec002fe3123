"""Variant helpers behind the proposer skills: `architect fitness`, `architect adas …`,
`architect aflow …`, `architect kdloop …`. All deterministic; all take --json."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import click

from harness.cli.output import UserError, emit, fail

# The helper modules import harness.cli.output, which imports this package:
# like run_cmds, the commands import them when they run, so that importing
# harness.variants.* first does not loop back here half-initialised.
MEMORY_FILES = ("experience", "hypotheses", "knowledge", "search_space")

json_option = click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object on stdout.")
run_argument = click.argument("run", metavar="RUN")
staging_argument = click.argument("staging", metavar="STAGING")
memory_file_argument = click.argument("file", metavar="FILE", type=click.Choice(MEMORY_FILES))


def _reports_errors(func):
    """Turn UserError (and unreadable JSON) into the shared one-line error convention."""

    @functools.wraps(func)
    def wrapper(*args, as_json: bool = False, **kwargs):
        try:
            return func(*args, as_json=as_json, **kwargs)
        except UserError as error:
            fail(error, as_json)
        except (OSError, json.JSONDecodeError) as error:
            fail(UserError(f"{type(error).__name__}: {error}"), as_json)

    return wrapper


def _human_lines(payload: dict) -> str:
    return "\n".join(f"{k}: {v}" for k, v in payload.items())


# --------------------------------------------------------------------------- fitness


@click.command("fitness")
@run_argument
@staging_argument
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap resampling.")
@json_option
@_reports_errors
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


# --------------------------------------------------------------------------- adas


@click.group("adas")
def adas_group():
    """ADAS helpers: the archive, the reflexion history, debug attempts."""


@adas_group.command("archive")
@run_argument
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap resampling.")
@json_option
@_reports_errors
def adas_archive(run, seed, as_json):
    """Rebuild RUN's archive from every committed iteration.

    Writes memory/archive.json and memory/archive.md (what the proposer reads):
    each candidate's graph, proposal and bootstrap fitness. Nothing is removed.
    """
    from harness.rundir.layout import resolve_run
    from harness.variants import adas

    paths = resolve_run(run)
    result = adas.write_archive(paths, seed)
    emit(result, as_json, f"{result['entries']} entries → {result['archive_md']}")


@adas_group.command("history")
@run_argument
@staging_argument
@json_option
@_reports_errors
def adas_history(run, staging, as_json):
    """Render STAGING/history.md: proposal, reflexion rounds so far, debug errors.

    Both reflexion rounds and every debug retry read this one file.
    """
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.variants import adas

    paths = resolve_run(run)
    result = adas.render_history(paths, resolve_staging(paths, staging))
    emit(result, as_json, result["history"])


@adas_group.command("revise")
@run_argument
@staging_argument
@click.option("--round", "round_", type=int, required=True, help="The reflexion round (1 or 2) whose revision to apply.")
@json_option
@_reports_errors
def adas_revise(run, staging, round_, as_json):
    """Apply reflexion round ROUND's revised proposal to STAGING/proposal.md.

    Takes the text under `## Revised proposal` of STAGING/reflexion-ROUND.md,
    checks its front matter (and that it keeps the staged parent), keeps the
    old proposal as proposal-before-ROUND.md, then re-renders history.md.
    """
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.variants import adas

    paths = resolve_run(run)
    folder = resolve_staging(paths, staging)
    result = adas.apply_revision(folder, round_)
    result["history"] = adas.render_history(paths, folder)
    emit(result, as_json, f"round {round_} applied → {result['proposal']}")


@adas_group.command("debug")
@run_argument
@staging_argument
@click.option("--error", "error_text", help="The error text of the failed attempt.")
@click.option("--error-file", type=click.Path(dir_okay=False, path_type=Path),
              help="A file holding the error text (e.g. the saved JSON of `architect smoke`).")
@json_option
@_reports_errors
def adas_debug(run, staging, error_text, error_file, as_json):
    """Record one failed attempt of STAGING; say whether a retry is left (3 in all)."""
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.variants import adas

    if (error_text is None) == (error_file is None):
        raise UserError("adas debug: give exactly one of --error TEXT or --error-file PATH")
    if error_file is not None:
        error_text = error_file.read_text(encoding="utf-8")
    paths = resolve_run(run)
    result = adas.record_debug(resolve_staging(paths, staging), error_text)
    emit(result, as_json, _human_lines(result))


# --------------------------------------------------------------------------- aflow


@click.group("aflow")
def aflow_group():
    """AFlow helpers: parent selection, experience, duplicate check, convergence."""


@aflow_group.command("select")
@run_argument
@click.option("--seed", type=int, default=None, help="RNG seed (default: the run's manifest seed, else 0).")
@click.option("--iteration", type=int, default=None,
              help="Iteration the parent is drawn for (default: the run's next iteration).")
@json_option
@_reports_errors
def aflow_select(run, seed, iteration, as_json):
    """Draw the parent among the top 4 iterations (iteration 0 always in).

    p_i = λ/n + (1−λ)·softmax(α(s_i − s_max)), α=0.2, λ=0.3, scores in percent.
    The same seed and iteration always draw the same parent.
    """
    from harness.rundir.layout import resolve_run
    from harness.variants import aflow
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
@run_argument
@click.option("--parent", type=int, required=True, help="The selected parent iteration.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to render it (default: RUN/memory/experience.md).")
@json_option
@_reports_errors
def aflow_experience(run, parent, out, as_json):
    """Write memory/experience.json and render PARENT's accepted/rejected modifications."""
    from harness.rundir.layout import resolve_run
    from harness.variants import aflow

    paths = resolve_run(run)
    result = aflow.write_experience(paths, parent, out)
    emit(result, as_json, result["rendered"])


@aflow_group.command("duplicate")
@run_argument
@staging_argument
@json_option
@_reports_errors
def aflow_duplicate(run, staging, as_json):
    """Is STAGING's proposal a whitespace-normalised repeat of an earlier one?

    Counts duplicate hits in the staging folder: `resample` while at most 5
    resamples were used, then `give_up`.
    """
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.variants import aflow

    paths = resolve_run(run)
    result = aflow.check_duplicate(paths, resolve_staging(paths, staging))
    emit(result, as_json, _human_lines(result))


@aflow_group.command("converged")
@run_argument
@json_option
@_reports_errors
def aflow_converged(run, as_json):
    """AFlow's stop rule: top-3 mean score unchanged for 5 consecutive iterations."""
    from harness.rundir.layout import resolve_run
    from harness.variants import aflow

    result = aflow.converged(resolve_run(run))
    emit(result, as_json, f"converged: {result['converged']}")


# --------------------------------------------------------------------------- kdloop


@click.group("kdloop")
def kdloop_group():
    """KDLoop helpers: memory files, specs, picking the best slot, REFLECT."""


@kdloop_group.command("init")
@run_argument
@json_option
@_reports_errors
def kdloop_init(run, as_json):
    """Create the missing memory files (knowledge.md, hypotheses.jsonl,
    experience.jsonl, search_space.md, events.jsonl); idempotent."""
    from harness.rundir.layout import resolve_run
    from harness.variants import kdloop

    paths = resolve_run(run)
    created = kdloop.init_memory(paths)
    emit({"memory": str(paths.memory), "created": created}, as_json, str(paths.memory))


@kdloop_group.command("append")
@run_argument
@memory_file_argument
@click.option("--text", help="Markdown text, or for a .jsonl file one JSON object.")
@click.option("--from-file", type=click.Path(dir_okay=False, path_type=Path), help="Read the text from a file.")
@json_option
@_reports_errors
def kdloop_append(run, file, text, from_file, as_json):
    """Append to a memory FILE (JSONL rows are validated against their schema)."""
    from harness.rundir.layout import resolve_run
    from harness.variants import kdloop

    if (text is None) == (from_file is None):
        raise UserError("kdloop append: give exactly one of --text or --from-file")
    if from_file is not None:
        text = from_file.read_text(encoding="utf-8")
    result = kdloop.append(resolve_run(run), file, text)
    emit(result, as_json, _human_lines(result))


@kdloop_group.command("delete")
@run_argument
@memory_file_argument
@click.option("--line", "lines", type=int, multiple=True, required=True,
              help="1-based line number to delete (repeatable). See `architect kdloop show`.")
@json_option
@_reports_errors
def kdloop_delete(run, file, lines, as_json):
    """Delete lines from a memory FILE (all or nothing)."""
    from harness.rundir.layout import resolve_run
    from harness.variants import kdloop

    result = kdloop.delete_lines(resolve_run(run), file, list(lines))
    emit(result, as_json, _human_lines(result))


@kdloop_group.command("show")
@run_argument
@memory_file_argument
@json_option
@_reports_errors
def kdloop_show(run, file, as_json):
    """Print a memory FILE with line numbers (for `delete --line`)."""
    from harness.rundir.layout import resolve_run
    from harness.variants import kdloop

    lines = kdloop.show(resolve_run(run), file)
    emit({"file": file, "lines": lines}, as_json, "\n".join(lines))


@kdloop_group.command("specs")
@run_argument
@click.argument("specs_file", metavar="SPECS_FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--stage", type=click.Choice(["think", "critic"]), default="think", show_default=True,
              help="Which step wrote the file (an empty THINK triggers REFLECT).")
@json_option
@_reports_errors
def kdloop_specs(run, specs_file, stage, as_json):
    """Validate SPECS_FILE (schemas/specs.schema.json, at most 3 specs; THINK
    writes it as RUN/memory/specs/<N>.json) and log it. A spec with
    `stack_near_miss` must name a near-miss in experience.jsonl."""
    from harness.rundir.layout import resolve_run
    from harness.variants import kdloop

    result = kdloop.register_specs(resolve_run(run), specs_file, stage)
    emit(result, as_json, _human_lines(result))


@kdloop_group.command("slot")
@run_argument
@click.argument("specs_file", metavar="SPECS_FILE", type=click.Path(dir_okay=False, path_type=Path))
@staging_argument
@json_option
@_reports_errors
def kdloop_slot(run, specs_file, staging, as_json):
    """Turn spec k of SPECS_FILE into slot STAGING (`staging/<N>-<k>`):
    proposal.md (description, axes, parent, hypothesis, change) and, when the
    spec has a structured patch, STAGING/edit.json to apply with
    `architect patch STAGING/candidate/graph.json STAGING/edit.json -o STAGING/candidate/graph.json`."""
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.variants import kdloop

    paths = resolve_run(run)
    result = kdloop.materialize(paths, specs_file, resolve_staging(paths, staging))
    emit(result, as_json, _human_lines(result))


@kdloop_group.command("evaluate")
@run_argument
@click.argument("stagings", metavar="STAGING...", nargs=-1, required=True)
@json_option
@_reports_errors
def kdloop_evaluate(run, stagings, as_json):
    """Evaluate several slots of one iteration on the performance tier.

    One process holds the run lock for all of them and runs as many at once as
    the cores allow (each evaluation already spreads its episodes over the
    cores). A failed slot is reported, not an error: `pick` sorts them out.
    """
    from harness.rundir.run import open_run
    from harness.variants import kdloop
    from harness.variants.fitness import staging_iteration

    with open_run(run) as opened:
        folders = [opened.staging(s) for s in stagings]
        if len({staging_iteration(f) for f in folders}) != 1:
            raise UserError("kdloop evaluate: all STAGING folders must belong to one iteration")
        result = kdloop.evaluate_slots(opened, folders)
    human = "\n".join([f"{s['staging']}: {'passed' if s['passed'] else 'FAILED ' + '; '.join(s['reasons'])}"
                       for s in result["slots"]] + [result["why"]])
    emit(result, as_json, human)


@kdloop_group.command("pick")
@run_argument
@click.argument("specs_file", metavar="SPECS_FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("stagings", metavar="STAGING...", nargs=-1, required=True)
@json_option
@_reports_errors
def kdloop_pick(run, specs_file, stagings, as_json):
    """Choose the best evaluated slot of this iteration and log every slot.

    Each STAGING is a slot folder `staging/<N>-<k>` for spec k of SPECS_FILE.
    The best is the highest mean; each slot gets its paired verdict against
    the parent (`vs_parent`) and the best against the runner-up
    (`vs_runner_up`; `near_tie` when indistinguishable). Appends one
    experience.jsonl row per evaluated slot (failed slots enter no memory);
    prints `best` (commit it) and `discard` (discard those: an evaluated
    losing slot is archived under slots/, not counted as a skip).
    """
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.variants import kdloop
    from harness.variants.fitness import staging_iteration

    paths = resolve_run(run)
    folders = [resolve_staging(paths, s) for s in stagings]
    if len({staging_iteration(f) for f in folders}) != 1:
        raise UserError("kdloop pick: all STAGING folders must belong to one iteration")
    result = kdloop.pick_best(paths, specs_file, folders)
    emit(result, as_json, _human_lines(result))


@kdloop_group.command("reflect-due")
@run_argument
@json_option
@_reports_errors
def kdloop_reflect_due(run, as_json):
    """Should REFLECT run now? Heartbeat (3 iterations), 3 same-axis iterations, or empty THINK."""
    from harness.rundir.layout import resolve_run
    from harness.variants import kdloop

    result = kdloop.reflect_due(resolve_run(run))
    emit(result, as_json, _human_lines(result))


@kdloop_group.command("reflected")
@run_argument
@click.option("--note", default=None, help="One line on what the audit concluded.")
@json_option
@_reports_errors
def kdloop_reflected(run, note, as_json):
    """Record that REFLECT ran (resets the heartbeat and the triggers)."""
    from harness.rundir.layout import resolve_run
    from harness.variants import kdloop

    result = kdloop.record_reflect(resolve_run(run), note)
    emit(result, as_json, _human_lines(result))


@kdloop_group.command("coverage")
@run_argument
@json_option
@_reports_errors
def kdloop_coverage(run, as_json):
    """Per intervention axis: evaluated experiments, paired verdicts against
    their parents (improved = better; worse; indistinguishable), best delta."""
    from harness.rundir.layout import resolve_run
    from harness.variants import kdloop

    result = kdloop.coverage(resolve_run(run))
    human = "\n".join(f"{axis}: {cell}" for axis, cell in result["axes"].items())
    emit(result, as_json, human)


@kdloop_group.command("stop")
@run_argument
@click.option("--reason", required=True, help="Why the search space is exhausted (written into STOP).")
@json_option
@_reports_errors
def kdloop_stop(run, reason, as_json):
    """End the run after the current iteration: writes STOP with the reason."""
    from harness.rundir.layout import resolve_run
    from harness.variants import kdloop

    result = kdloop.stop(resolve_run(run), reason)
    emit(result, as_json, _human_lines(result))


# --------------------------------------------------------------------------- random


@click.group("random")
def random_group():
    """The built-in random proposer, one staged candidate at a time."""


@random_group.command("propose")
@run_argument
@staging_argument
@click.option("--seed", type=int, default=None, help="RNG seed (default: the run's manifest seed, else 0).")
@json_option
@_reports_errors
def random_propose(run, staging, seed, as_json):
    """Apply one random, statically valid edit to STAGING's candidate and fill in
    its proposal.md (the same proposer `architect loop random` uses)."""
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.rundir.ledger import read_rows
    from harness.rundir.records import read_manifest
    from harness.variants.random_proposer import propose_into

    paths = resolve_run(run)
    folder = resolve_staging(paths, staging)
    if seed is None:
        seed = read_manifest(paths).get("seed") or 0
    result = propose_into(folder, seed, attempt=len(read_rows(paths.ledger)))
    payload = {"staging": str(folder), "description": result.description, "axes": result.axes,
               "move": result.move, "tries": result.tries, "patch": result.patch}
    emit(payload, as_json, result.description)


def register(main: click.Group) -> None:
    """Attach this module's commands to the root group."""
    main.add_command(random_group)
    main.add_command(fitness_cmd)
    main.add_command(adas_group)
    main.add_command(aflow_group)
    main.add_command(kdloop_group)

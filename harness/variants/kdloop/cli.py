"""`architect kdloop …`: the KDLoop helpers behind its skill (memory files, specs,
slots, REFLECT). Deterministic; all take --json."""

from __future__ import annotations

import json
from pathlib import Path

import click

from harness.cli.conventions import JSON_OPTION, RUN_ARGUMENT, STAGING_ARGUMENT, UserError, emit, handled, lines_of


# The memory files of memory.MEMORY_FILES (listed here so that `--help` imports nothing heavy).
MEMORY_FILES = ("experience", "hypotheses", "knowledge", "search_space")
MEMORY_FILE_ARGUMENT = click.argument("file", metavar="FILE", type=click.Choice(MEMORY_FILES))


@click.group("kdloop")
def kdloop_group():
    """KDLoop helpers: memory files, specs, picking the best slot, REFLECT."""


@kdloop_group.command("init")
@RUN_ARGUMENT
@JSON_OPTION
@handled
def kdloop_init(run, as_json):
    """Create the missing memory files (knowledge.md, hypotheses.jsonl,
    experience.jsonl, search_space.md, events.jsonl); idempotent."""
    from harness.rundir.layout import resolve_run
    from harness.variants.kdloop import memory as kdloop

    paths = resolve_run(run)
    created = kdloop.init_memory(paths)
    emit({"memory": str(paths.memory), "created": created}, as_json, str(paths.memory))


@kdloop_group.command("append")
@RUN_ARGUMENT
@MEMORY_FILE_ARGUMENT
@click.option("--text", help="Markdown text, or for a .jsonl file one JSON object.")
@click.option("--from-file", type=click.Path(dir_okay=False, path_type=Path), help="Read the text from a file.")
@JSON_OPTION
@handled
def kdloop_append(run, file, text, from_file, as_json):
    """Append to a memory FILE (JSONL rows are validated against their schema)."""
    from harness.rundir.layout import resolve_run
    from harness.variants.kdloop import memory as kdloop

    if (text is None) == (from_file is None):
        raise UserError("kdloop append: give exactly one of --text or --from-file")
    if from_file is not None:
        text = from_file.read_text(encoding="utf-8")
    result = kdloop.append(resolve_run(run), file, text)
    emit(result, as_json, lines_of(result))


@kdloop_group.command("delete")
@RUN_ARGUMENT
@MEMORY_FILE_ARGUMENT
@click.option("--line", "lines", type=int, multiple=True, required=True,
              help="1-based line number to delete (repeatable). See `architect kdloop show`.")
@JSON_OPTION
@handled
def kdloop_delete(run, file, lines, as_json):
    """Delete lines from a memory FILE (all or nothing)."""
    from harness.rundir.layout import resolve_run
    from harness.variants.kdloop import memory as kdloop

    result = kdloop.delete_lines(resolve_run(run), file, list(lines))
    emit(result, as_json, lines_of(result))


@kdloop_group.group("hypothesis")
def kdloop_hypothesis():
    """Hypotheses by id (hypotheses.jsonl; add one with `kdloop append RUN hypotheses`)."""


@kdloop_hypothesis.command("update")
@RUN_ARGUMENT
@click.argument("hypothesis_id", metavar="ID")
@click.option("--status", type=click.Choice(["open", "supported", "refuted", "inconclusive", "retired"]))
@click.option("--evidence", help="What the experiments showed (replaces the old text).")
@click.option("--statement", help="A sharper statement of the hypothesis.")
@click.option("--axis", "axes", multiple=True, help="Intervention axis (repeatable; replaces the old axes).")
@click.option("--iteration", type=int, help="The iteration that updated it.")
@JSON_OPTION
@handled
def kdloop_hypothesis_update(run, hypothesis_id, status, evidence, statement, axes, iteration, as_json):
    """Change hypothesis ID in place (the row is validated; line numbers do not matter)."""
    from harness.rundir.layout import resolve_run
    from harness.variants.kdloop import memory as kdloop

    changes = {"status": status, "evidence": evidence, "statement": statement,
               "axes": list(axes) or None, "iteration": iteration}
    result = kdloop.update_hypothesis(resolve_run(run), hypothesis_id, changes)
    emit(result, as_json, f"{hypothesis_id}: " + json.dumps(result["after"], sort_keys=True))


@kdloop_group.command("show")
@RUN_ARGUMENT
@MEMORY_FILE_ARGUMENT
@JSON_OPTION
@handled
def kdloop_show(run, file, as_json):
    """Print a memory FILE with line numbers (for `delete --line`)."""
    from harness.rundir.layout import resolve_run
    from harness.variants.kdloop import memory as kdloop

    lines = kdloop.show(resolve_run(run), file)
    emit({"file": file, "lines": lines}, as_json, "\n".join(lines))


@kdloop_group.command("specs")
@RUN_ARGUMENT
@click.argument("specs_file", metavar="SPECS_FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--stage", type=click.Choice(["think", "critic"]), default="think", show_default=True,
              help="Which step wrote the file (an empty THINK triggers REFLECT).")
@JSON_OPTION
@handled
def kdloop_specs(run, specs_file, stage, as_json):
    """Validate SPECS_FILE (schemas/specs.schema.json, at most 3 specs; THINK
    writes it as RUN/memory/specs/<N>.json) and log it. A spec with
    `stack_near_miss` must name a near-miss in experience.jsonl."""
    from harness.rundir.layout import resolve_run
    from harness.variants.kdloop import memory as kdloop

    result = kdloop.register_specs(resolve_run(run), specs_file, stage)
    emit(result, as_json, lines_of(result))


@kdloop_group.command("slot")
@RUN_ARGUMENT
@click.argument("specs_file", metavar="SPECS_FILE", type=click.Path(dir_okay=False, path_type=Path))
@STAGING_ARGUMENT
@JSON_OPTION
@handled
def kdloop_slot(run, specs_file, staging, as_json):
    """Turn spec k of SPECS_FILE into slot STAGING (`staging/<N>-<k>`):
    proposal.md (description, axes, parent, hypothesis, change) and, when the
    spec has a structured patch, STAGING/edit.json to apply with
    `architect patch STAGING/candidate/graph.json STAGING/edit.json -o STAGING/candidate/graph.json`."""
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.variants.kdloop import memory as kdloop

    paths = resolve_run(run)
    result = kdloop.materialize(paths, specs_file, resolve_staging(paths, staging))
    emit(result, as_json, lines_of(result))


@kdloop_group.command("evaluate")
@RUN_ARGUMENT
@click.argument("stagings", metavar="STAGING...", nargs=-1, required=True)
@JSON_OPTION
@handled
def kdloop_evaluate(run, stagings, as_json):
    """Evaluate several slots of one iteration on the performance tier.

    One process holds the run lock for all of them and runs as many at once as
    the cores allow (each evaluation already spreads its episodes over the
    cores). A failed slot is reported, not an error: `pick` sorts them out.
    """
    from harness.rundir.run import open_run
    from harness.variants.kdloop import memory as kdloop
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
@RUN_ARGUMENT
@click.argument("specs_file", metavar="SPECS_FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("stagings", metavar="STAGING...", nargs=-1, required=True)
@JSON_OPTION
@handled
def kdloop_pick(run, specs_file, stagings, as_json):
    """Choose the best evaluated slot of this iteration and log every slot.

    Each STAGING is a slot folder `staging/<N>-<k>` for spec k of SPECS_FILE.
    The best is the highest mean; each slot gets its paired verdict against
    the parent (`vs_parent`) and the best against the runner-up
    (`vs_runner_up`; `near_tie` when indistinguishable). Appends one
    experience.jsonl row per evaluated slot (failed slots enter no memory);
    prints `best` (commit it) and `discard` (discard those: an evaluated
    losing slot is archived under slots/, not counted as a skip), and a
    `warning` when the best acted exactly as the parent on every shared episode
    (`best_identical_to_parent`).
    """
    from harness.rundir.layout import resolve_run, resolve_staging
    from harness.variants.kdloop import memory as kdloop
    from harness.variants.fitness import staging_iteration

    paths = resolve_run(run)
    folders = [resolve_staging(paths, s) for s in stagings]
    if len({staging_iteration(f) for f in folders}) != 1:
        raise UserError("kdloop pick: all STAGING folders must belong to one iteration")
    result = kdloop.pick_best(paths, specs_file, folders)
    emit(result, as_json, lines_of(result))


@kdloop_group.command("reflect-due")
@RUN_ARGUMENT
@JSON_OPTION
@handled
def kdloop_reflect_due(run, as_json):
    """Should REFLECT run now? Heartbeat (3 iterations), 3 same-axis iterations, or empty THINK."""
    from harness.rundir.layout import resolve_run
    from harness.variants.kdloop import memory as kdloop

    result = kdloop.reflect_due(resolve_run(run))
    emit(result, as_json, lines_of(result))


@kdloop_group.command("reflected")
@RUN_ARGUMENT
@click.option("--note", default=None, help="One line on what the audit concluded.")
@JSON_OPTION
@handled
def kdloop_reflected(run, note, as_json):
    """Record that REFLECT ran (resets the heartbeat and the triggers)."""
    from harness.rundir.layout import resolve_run
    from harness.variants.kdloop import memory as kdloop

    result = kdloop.record_reflect(resolve_run(run), note)
    emit(result, as_json, lines_of(result))


@kdloop_group.command("coverage")
@RUN_ARGUMENT
@JSON_OPTION
@handled
def kdloop_coverage(run, as_json):
    """Per intervention axis: evaluated experiments, paired verdicts against
    their parents (improved = better; worse; indistinguishable), best delta."""
    from harness.rundir.layout import resolve_run
    from harness.variants.kdloop import memory as kdloop

    result = kdloop.coverage(resolve_run(run))
    human = "\n".join(f"{axis}: {cell}" for axis, cell in result["axes"].items())
    emit(result, as_json, human)


@kdloop_group.command("stop")
@RUN_ARGUMENT
@click.option("--reason", required=True, help="Why the search space is exhausted (written into STOP).")
@JSON_OPTION
@handled
def kdloop_stop(run, reason, as_json):
    """End the run after the current iteration: writes STOP with the reason."""
    from harness.rundir.layout import resolve_run
    from harness.variants.kdloop import memory as kdloop

    result = kdloop.stop(resolve_run(run), reason)
    emit(result, as_json, lines_of(result))

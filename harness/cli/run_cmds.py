"""Run-directory subcommands: init, stage, check, smoke, evaluate, commit,
discard, status, log, rerun, and the offline `loop`."""

from __future__ import annotations

import io
from pathlib import Path

import click

from harness.cli.backend_options import backend_options, evaluation_setting
from harness.cli.conventions import JSON_OPTION, RUNS_DIR_OPTION, UserError, emit, handled, progress_say
from harness.cli.interrupt import interruptible


def _render(renderable) -> str:
    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, width=160, force_terminal=False).print(renderable)
    return buffer.getvalue().rstrip("\n")


def SPEND_OPTIONS(command):
    """--max-cost-usd, --max-tokens (caps stored in a new run's manifest) and --dry-run."""
    for option in reversed([
        click.option("--max-cost-usd", type=click.FloatRange(min=0), default=None,
                     help="New run: stop once its evaluations' model cost reaches this many USD (checked between iterations)."),
        click.option("--max-tokens", type=click.IntRange(min=0), default=None,
                     help="New run: stop once its evaluations used this many model tokens (checked between iterations)."),
        click.option("--dry-run", is_flag=True,
                     help="Run nothing: print the episodes, model calls, estimated cost and time of one iteration."),
    ]):
        command = option(command)
    return command


TIER_OPTION = click.option(
    "--tier", default=None, metavar="TIER",
    help="New run: the tier every iteration is evaluated on (default: the executor profile's performance tier; "
         "`architect executors --json` lists the tiers, e.g. BabyAI's search-hard). The matching sealed holdout "
         "(holdout-hard for search-hard, else holdout) is the one certification uses.")


def EPISODE_LIST_OPTIONS(command):
    """--episodes FILE (the performance tier) and --holdout FILE (the sealed tier) of a new run."""
    file = click.Path(dir_okay=False, path_type=Path)
    command = click.option(
        "--holdout", "holdout_file", type=file, default=None, metavar="FILE",
        help="New run: certify on the episodes listed in FILE instead of the profile's holdout: a sealed tier "
             "named after the file, stored in the run's manifest, sharing no episode with any other tier.")(command)
    return click.option(
        "--episodes", "episodes_file", type=file, default=None, metavar="FILE",
        help="New run: evaluate every iteration on the episodes listed in FILE (.jsonl, one episode object per "
             "line, or a .json/.yaml list; checked against schemas/episode_<executor>.schema.json), a tier named "
             "by --tier or after the file, stored in the run's manifest.")(command)


def _run_tiers(executor_or_seed: str, episodes_file, holdout_file, tier) -> dict:
    """`init_run`'s keyword arguments for the tiers of a new run (episode list files included)."""
    from harness.episode_lists import run_tiers
    from harness.rundir.create import resolve_seed_candidate

    if episodes_file is None and holdout_file is None:
        return {"performance_tier": tier}
    executor = resolve_seed_candidate(executor_or_seed)[2]
    extra, tier, holdout = run_tiers(executor, episodes_file, holdout_file, tier)
    return {"performance_tier": tier, "run_tiers": extra, "holdout_tier": holdout}


def _fitness_rule():
    from harness.variants.fitness import fitness_for

    return fitness_for


def _print_dry_run(variant, executor, smoke_episodes, eval_episodes, run_tiers, max_iterations, as_json) -> None:
    from harness.rundir.create import dry_run
    from harness.rundir.plan import render

    plan = dry_run(variant, executor, smoke_episodes=smoke_episodes, eval_episodes=eval_episodes,
                   tier=run_tiers["performance_tier"], run_tiers=run_tiers.get("run_tiers"),
                   holdout_tier=run_tiers.get("holdout_tier"), max_iterations=max_iterations)
    emit(dict(plan, ok=True, dry_run=True), as_json, human=render(plan))


def _runs_dir(runs_dir: Path | None) -> Path:
    from harness.rundir.layout import default_runs_dir

    return runs_dir if runs_dir is not None else default_runs_dir()


@click.command("init")
@click.argument("variant")
@click.argument("executor")  # an executor name or one of its seed names
@click.option("--run-id", default=None, help="Name of the run folder (default: <variant>-<executor>-<UTC time>).")
@click.option("--max-iterations", type=int, default=None,
              help="Cap on committed iterations after iteration 0 (default: the variant's cap, see docs/contracts.md).")
@click.option("--max-skips", type=int, default=None, help="Stop after this many consecutive discarded attempts (default 10).")
@click.option("--smoke-episodes", type=click.IntRange(min=1), default=None,
              help="Use only N smoke episodes (cheap runs), taken round-robin over the tier's groups.")
@click.option("--eval-episodes", type=click.IntRange(min=1), default=None,
              help="Use only N performance-tier episodes (cheap runs), taken round-robin over the tier's groups "
                   "(level, suite) in tier order; the dry run and init say which.")
@click.option("--seed", type=int, default=None, help="Seed of the random proposer, stored in the manifest.")
@TIER_OPTION
@EPISODE_LIST_OPTIONS
@backend_options
@SPEND_OPTIONS
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
@interruptible(lambda kw: "no run was created (the half-built folder is removed); run the same "
                          "`architect init` again to start it")
def init_cmd(variant, executor, run_id, max_iterations, max_skips, smoke_episodes, eval_episodes, seed, tier,
             episodes_file, holdout_file, backend, ray_address, max_cost_usd, max_tokens, dry_run, runs_dir, as_json):
    """Create a run directory (its own git repository) for VARIANT on EXECUTOR.

    EXECUTOR is an executor (its default seed) or a seed name (e.g. babyai-llm);
    `architect executors` lists both. Iteration 0 is that seed candidate, smoke-
    and performance-evaluated and committed. Prints the run path."""
    from harness.rundir.create import DEFAULT_MAX_SKIPS, init_run
    from harness.rundir.loop import Progress
    run_tiers = _run_tiers(executor, episodes_file, holdout_file, tier)
    if dry_run:
        return _print_dry_run(variant, executor, smoke_episodes, eval_episodes, run_tiers, max_iterations, as_json)
    show = Progress(enabled=True)
    paths = init_run(variant, executor, runs_dir=_runs_dir(runs_dir), run_id=run_id,
                     max_iterations=max_iterations, **run_tiers,
                     max_skips=DEFAULT_MAX_SKIPS if max_skips is None else max_skips,
                     smoke_episodes=smoke_episodes, eval_episodes=eval_episodes, seed=seed, say=show.say, progress=True,
                     evaluation=evaluation_setting(backend, ray_address),
                     spend_caps={"max_cost_usd": max_cost_usd, "max_tokens": max_tokens}, fitness=_fitness_rule())
    from harness.rundir.ledger import read_rows

    seed = read_rows(paths.ledger)[0]
    emit({"ok": True, "run": str(paths.root), "run_id": paths.run_id,
          "iteration_0": {k: seed.get(k) for k in ("status", "primary", "smoke", "wall_seconds")},
          "next": f"architect status {paths.root} --json"}, as_json, human=str(paths.root))


@click.command("stage")
@click.argument("run")
@click.option("--parent", type=int, default=None, help="Committed iteration to start from (default: the best so far).")
@click.option("--slot", default=None, help="Name of a parallel staging slot (staging/<iter>-<slot>).")
@click.option("--replace", is_flag=True, help="Replace an existing staging folder of the same name.")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def stage_cmd(run, parent, slot, replace, runs_dir, as_json):
    """Copy the parent candidate into staging/<iter>[-<slot>]/ and print its path.

    Edit staging/.../candidate/ and the front matter of proposal.md, then run
    check, smoke, evaluate and commit (or discard)."""
    from harness.rundir.run import open_run
    from harness.rundir.stage import stage

    with open_run(run, runs_dir) as opened:
        folder = stage(opened, parent=parent, slot=slot, replace=replace)
        meta = opened.staging_meta(folder)
    emit({"ok": True, "staging": str(folder), **meta}, as_json, human=str(folder))


@click.command("check")
@click.argument("run")
@click.argument("staging")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def check_cmd(run, staging, runs_dir, as_json):
    """Statically check a staged candidate: edit whitelist, JSON/Python parse,
    proposal front matter, graph schema and validation, pinned model profile.

    Lists every violation with its path; exits 1 if there is any."""
    from harness.rundir.check import run_check
    from harness.rundir.run import open_staging

    with open_staging(run, staging, runs_dir) as (opened, folder):
        result = run_check(opened, folder)
    lines = [v["message"] + (f"  (hint: {v['hint']})" if v.get("hint") else "") for v in result["violations"]]
    emit(dict(result, staging=str(staging)), as_json, human="\n".join(lines) or "ok: no violations")
    if result["violations"]:
        raise SystemExit(1)


def _race_options(command):
    """`evaluate`'s sequential racing against the parent (harness.evaluation.racing)."""
    for option in reversed([
        click.option("--race", is_flag=True, help="Race the child against its parent in batches of the parent's "
                     "episodes; stop when an anytime-valid test decides (better, worse, or within the margin)."),
        click.option("--alpha", type=float, default=0.05, show_default=True,
                     help="--race: error rate of each decision."),
        click.option("--margin", type=float, default=0.1, show_default=True,
                     help="--race: equivalence margin on the mean difference (0.1 = 10 points)."),
        click.option("--batch", type=click.IntRange(min=1), default=10, show_default=True,
                     help="--race: episodes per batch."),
    ]):
        command = option(command)
    return command


def _tier_command(kind: str, name: str, doc: str):
    def race_flags(fn):
        return _race_options(fn) if kind == "eval" else fn

    @click.command(name, help=doc)
    @click.argument("run")
    @click.argument("staging")
    @race_flags
    @RUNS_DIR_OPTION
    @JSON_OPTION
    @handled
    @interruptible(lambda kw: f"the run is consistent: nothing of this {name} was recorded in the ledger; run "
                              f"`architect {name} {kw['run']} {kw['staging']}` again to continue")
    def command(run, staging, runs_dir, as_json, race=False, alpha=0.05, margin=0.1, batch=10):
        from harness.rundir.run import open_staging

        with open_staging(run, staging, runs_dir) as (opened, folder):
            if race:
                from harness.evaluation.racing import RaceConfig
                from harness.rundir.race import race_staging

                verdict = race_staging(opened, folder, RaceConfig(alpha=alpha, margin=margin, batch=batch),
                                       progress=True)
            else:
                verdict = opened.evaluate_staging(folder, kind, progress=True)
        extra = {"staging": str(folder), "results": str(folder / kind)}
        if kind == "eval":  # `passed` here is "usable", not "better": say so in a key of its own
            extra["scored"] = bool(verdict["passed"])
            good = "scored (complete, primary metric measured; not a comparison with the parent)"
        else:
            good = "passed"
        human = (good if verdict["passed"] else "FAILED: " + "; ".join(verdict["reasons"]))
        if verdict.get("primary", {}).get("mean") is not None:
            from harness.rundir.display import score_text

            human += f"  {verdict['primary'].get('metric')}: {score_text(verdict['primary'])}"
        if kind == "smoke":
            from harness.rundir.smoke_outcomes import render, smoke_outcomes

            outcomes = smoke_outcomes(opened, folder)
            if outcomes is not None:
                verdict = dict(verdict, episode_outcomes=outcomes["episodes"], vs_parent=outcomes["vs_parent"])
                human += "\n" + render(outcomes)
        if verdict.get("race"):
            r = verdict["race"]
            human += (f"\nrace vs parent {r['parent']}: {r['verdict']} after {r['episodes']} of {r['parent_episodes']} "
                      f"episodes ({r['decided_by']}; {r['error_rates']})")
        emit(dict(verdict, **extra), as_json, human=human)
        if not verdict["passed"]:
            raise SystemExit(1)

    return command


smoke_cmd = _tier_command("smoke", "smoke", "Run the smoke tier on a staged candidate (the smoke gate: clean exit, "
                          "at least one step per episode, a valid metric). Results go to STAGING/smoke/.")
evaluate_cmd = _tier_command("eval", "evaluate", "Evaluate a staged candidate on the performance tier of the executor "
                             "profile. Results go to STAGING/eval/. `passed` (and `scored`, the same value) means the "
                             "evaluation is complete and measured the primary metric, whatever its score; the "
                             "comparison with the parent is `architect fitness`'s `vs_parent`. With --race, only as "
                             "many of the parent's "
                             "episodes as an anytime-valid paired test needs to decide (STAGING/eval/race.json).")


@click.command("commit")
@click.argument("run")
@click.argument("staging")
@click.option("--description", default=None, help="One line saying what this iteration changes (default: proposal.md's).")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def commit_cmd(run, staging, description, runs_dir, as_json):
    """Commit a staged candidate as the next iteration: one git commit holding
    candidate, proposal, patch, diff and results, plus a ledger row.

    Refused unless check, smoke and evaluate passed for the current content."""
    from harness.rundir.commit import commit
    from harness.rundir.run import open_run_staging

    with open_run_staging(run, staging, runs_dir) as (opened, folder):
        row = commit(opened, folder, description)
        best = opened.state()["best"]
    note = _best_note(row, best)
    emit(dict(row, ok=True, best_note=note), as_json, human=f"committed iteration {row['iteration']}: {row['path']}"
         + (f"\nwarning: {row['warning']}" if row["warning"] else "") + (f"\nnote: {note}" if note else ""))


def _best_note(row: dict, best: dict | None) -> str | None:
    """Why a commit that became the run's best may still be "not accepted" by a variant's rule."""
    from harness.rundir.ledger import BEST_RULE

    verdict = (row.get("vs_parent") or {}).get("verdict")
    if not best or best["iteration"] != row["iteration"] or verdict in (None, "better"):
        return None
    return (f"iteration {row['iteration']} is now the run's best ({BEST_RULE}), though the paired test calls it "
            f"{verdict} against its parent: a rule that accepts only 'better' children (AFlow's experience) "
            "lists it as not accepted; the two rules differ, neither is an error")


@click.command("discard")
@click.argument("run")
@click.argument("staging")
@click.option("--reason", required=True, help="Why the attempt is dropped (kept in the ledger).")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def discard_cmd(run, staging, reason, runs_dir, as_json):
    """Drop a staged attempt: its folder is removed, a ledger row keeps the
    reason, and the consecutive-skip counter goes up. No iteration number is used."""
    from harness.rundir.commit import discard
    from harness.rundir.run import open_run_staging

    with open_run_staging(run, staging, runs_dir) as (opened, folder):
        row = discard(opened, folder, reason)
        skips = opened.state()["consecutive_skips"]
    emit(dict(row, ok=True, consecutive_skips=skips), as_json, human=f"discarded ({skips} consecutive skip(s))")


@click.command("status")
@click.argument("run")
@click.option("--watch", is_flag=True,
              help="Follow a running loop: redraw status and the latest ledger rows on stderr until it stops, "
                   "then print the final status.")
@click.option("--interval", type=click.FloatRange(min=0.1), default=2.0, show_default=True,
              help="Seconds between redraws with --watch.")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def status_cmd(run, watch, interval, runs_dir, as_json):
    """Show where a run stands: state, best iteration, caps, staged attempts,
    and whether git history, ledger and state agree."""
    from harness.rundir.status import run_status

    if watch:
        from harness.rundir.watch import watch as follow

        report = follow(run, runs_dir, interval)
    else:
        report = run_status(run, runs_dir)
    emit(report, as_json, human=report["summary"])
    if not report["consistent"] and not report["busy"]:
        raise SystemExit(4)  # the report above says what disagrees and how to repair it


@click.command("log")
@click.argument("run")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def log_cmd(run, runs_dir, as_json):
    """Show the ledger: one row per attempt (committed or discarded), with the
    share of the most-used axis (a high share hints at a local basin)."""
    from harness.rundir import ledger
    from harness.rundir.display import ledger_table
    from harness.rundir.layout import resolve_run

    paths = resolve_run(run, runs_dir)
    rows = ledger.read_rows(paths.ledger)
    share = ledger.axis_share(rows)
    human = _render(ledger_table(rows, title=f"ledger of {paths.run_id}"))
    if share:
        human += f"\nmost-used axis: {share['axis']} ({share['iterations']} iteration(s), {share['share']:.0%} of tagged)"
    emit({"run": str(paths.root), "rows": rows, "axis_share": share}, as_json, human=human)


@click.command("rerun")
@click.argument("run")
@click.option("--iter", "iteration", type=int, required=True, help="Committed iteration to re-evaluate.")
@click.option("--times", type=int, default=3, show_default=True, help="Number of fresh evaluations.")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def rerun_cmd(run, iteration, times, runs_dir, as_json):
    """Re-evaluate a committed iteration under the same performance
    configuration (no cache) and record the draws (mean ± sd) in
    iterations/<N>/reruns.json, committed."""
    from harness.rundir.rerun import rerun
    from harness.rundir.run import open_run

    with open_run(run, runs_dir) as opened:
        record = rerun(opened, iteration, times, progress=True)
    emit(dict(record, ok=True), as_json,
         human=f"iteration {iteration}: {len(record['draws'])} draw(s), mean {record['mean']:.4f} ± {record['sd']:.4f}")


@click.command("loop")
@click.argument("variant")
@click.argument("executor")
@click.option("--iterations", type=click.IntRange(min=0), default=None,
              help="Run until this many iterations after 0 are committed (default: the run's --max-iterations cap).")
@click.option("--run-id", default=None, help="Run folder name (default: a new <variant>-<executor>-<UTC time>).")
@click.option("--resume", is_flag=True,
              help="Continue a run after a crash, a STOP file or a cap (default: the latest run of VARIANT on EXECUTOR).")
@click.option("--seed", type=int, default=None, help="Seed of the random proposer (default 0; stored in the manifest).")
@click.option("--max-iterations", type=int, default=None,
              help="Cap stored in a new run's manifest (default: --iterations, else the variant's cap).")
@click.option("--max-skips", type=int, default=None, help="Consecutive discarded attempts that stop a new run (default 10).")
@click.option("--smoke-episodes", type=click.IntRange(min=1), default=None,
              help="New run: use only N smoke episodes (round-robin over the tier's groups).")
@click.option("--eval-episodes", type=click.IntRange(min=1), default=None,
              help="New run: use only N performance episodes (round-robin over the tier's groups).")
@click.option("--certify/--no-certify", default=True, show_default=True,
              help="When the loop stops, certify: reruns of iteration 0 and the best, then both on the sealed holdout.")
@click.option("--certify-reruns", type=click.IntRange(min=1), default=3, show_default=True,
              help="Certification: reruns of each on the rerun tier (the executor profile's rerun_tier, else the "
                   "performance tier; `architect certify RUN --dry-run` names it).")
@click.option("--holdout-episodes", type=click.IntRange(min=1), default=None,
              help="Certification: only N holdout episodes, round-robin over its groups (default: the run's "
                   "--eval-episodes cap, else all).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Headless-driver variants (shaper): YAML of the variant's settings for a new run.")
@click.option("--scripted-models", is_flag=True,
              help="Headless-driver variants (shaper): answer every model call with scripted stand-ins on a loopback server (offline).")
@TIER_OPTION
@EPISODE_LIST_OPTIONS
@backend_options
@SPEND_OPTIONS
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
@interruptible(lambda kw: "the run is consistent: its committed iterations and the stop reason `interrupted` are "
                          f"recorded; `architect loop {kw['variant']} {kw['executor']} --resume"
                          + (f" --run-id {kw['run_id']}" if kw.get("run_id") else "") + "` continues it")
def loop_cmd(variant, executor, iterations, run_id, resume, seed, max_iterations, max_skips, smoke_episodes,
             eval_episodes, certify, certify_reruns, holdout_episodes, config_path, scripted_models, tier,
             episodes_file, holdout_file, backend, ray_address, max_cost_usd, max_tokens, dry_run, runs_dir, as_json):
    """Drive the search: stage -> propose -> check -> smoke -> evaluate ->
    commit/discard, with live progress on stderr, ending with a summary table.

    Runs here: every variant with an offline proposer (e.g. `random`), and
    variants with a headless driver (`shaper`: EXECUTOR is a seed such as
    babyai-llm; --config and --scripted-models are its options). The
    model-driven variants (adas, aflow, kdloop) are driven by the Claude Code
    skill /architect:loop, which calls the same stage/check/commit commands."""
    from harness.evaluation.warm import keep_private
    from harness.rundir.create import DEFAULT_MAX_SKIPS
    from harness.rundir.loop import Progress, run_loop
    from harness.rundir.resume import open_or_start
    from harness.variant_api import HEADLESS, find_variant

    keep_private()  # the loop keeps its own forkserver for its lifetime and leaves no server running after it
    spec = find_variant(variant)
    schedule = (iterations, max_iterations, max_skips, tier, episodes_file, holdout_file)
    mode = spec.loop_mode(executor, schedule_options=schedule != (None,) * len(schedule),
                          driver_options=bool(config_path or scripted_models))
    if mode == HEADLESS and dry_run:
        raise UserError(f"--dry-run: {variant} runs its own schedule (a headless driver) and has no dry run; "
                        "nothing was run. Drop --dry-run to run it, or see `architect loop --help`")
    if mode == HEADLESS:
        result = spec.drive_headless(executor, run_id=run_id, resume=resume, config_path=config_path,
                                     scripted_models=scripted_models, seed=seed, smoke_episodes=smoke_episodes,
                                     eval_episodes=eval_episodes, runs_dir=_runs_dir(runs_dir), say=progress_say())
        return emit(result.payload, as_json, human=result.text)
    run_tiers = _run_tiers(executor, episodes_file, holdout_file, tier)
    if dry_run:
        return _print_dry_run(variant, executor, smoke_episodes, eval_episodes, run_tiers,
                              max_iterations if max_iterations is not None else iterations, as_json)
    show = Progress(enabled=True)
    paths = open_or_start(
        variant, executor, run_id=run_id, resume=resume, runs_dir=_runs_dir(runs_dir), say=show.say,
        evaluation=evaluation_setting(backend, ray_address),
        max_iterations=max_iterations if max_iterations is not None else iterations,
        max_skips=DEFAULT_MAX_SKIPS if max_skips is None else max_skips, smoke_episodes=smoke_episodes,
        eval_episodes=eval_episodes, seed=0 if seed is None else seed, **run_tiers,
        spend_caps={"max_cost_usd": max_cost_usd, "max_tokens": max_tokens}, fitness=_fitness_rule())
    certification = {"reruns": certify_reruns, "holdout_episodes": holdout_episodes} if certify else None
    result = run_loop(paths, target=iterations, seed=seed, show=show, propose=spec.proposer(),
                      certification=certification)
    human = _loop_text(result)
    if as_json:
        click.echo(human, err=True)
    summary = {key: result.get(key) for key in ("run", "run_id", "stop_reason", "state", "rows", "best",
                                                "certification")}
    emit({"ok": True, **summary}, as_json, human=f"{human}\nrun: {result['run']}")


def _loop_text(result: dict) -> str:
    """The summary a loop ends with: its ledger, the best iteration and the certification."""
    from harness.rundir.display import ledger_table
    from harness.rundir.evidence import best_text

    table = _render(ledger_table(result["rows"], title=f"run {result['run_id']} — stopped: {result['stop_reason']}"))
    human = f"{table}\n{best_text(result['best'])}"
    if result.get("certification"):
        from harness.rundir.certify import render

        human += "\ncertification: " + render(result["certification"]).replace("\n", "\n  ")
    return human


COMMANDS = (init_cmd, stage_cmd, check_cmd, smoke_cmd, evaluate_cmd, commit_cmd, discard_cmd, status_cmd,
            log_cmd, rerun_cmd, loop_cmd)


def register(main: click.Group) -> None:
    """Attach this module's commands to the root group."""
    for command in COMMANDS:
        main.add_command(command)

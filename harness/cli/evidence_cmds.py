"""The optimizer's evidence: `architect episodes` (gained / lost episodes and
paired statistics) and `architect episode` (one episode's trace, its state
rendered at a tick, the divergence point against another candidate) and
`architect outputs` (one node's output values over a whole evaluation)."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.conventions import JSON_OPTION, RUNS_DIR_OPTION, UserError, emit, handled, rounded
from harness.cli.interrupt import interruptible

JSON_TRACE_MAX_BYTES = 30_000  # (Claude Code's Bash tool shows 30,000 characters of a command's output)
TRACE_MAX_BYTES = 5_000_000

CONFIDENCE_OPTION = click.option("--confidence", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True,
                                 help="Confidence of the paired tests and intervals.")


@click.command("episodes")
@click.argument("run")
@click.argument("iteration", metavar="ITER")
@click.option("--vs", "vs", default=None, metavar="ITER",
              help="Compare against this iteration (or staging folder) instead of ITER's parent.")
@click.option("--metrics", "per_episode", is_flag=True,
              help="Also every episode's metrics in one table, with per-level aggregates (JSON: `per_episode`).")
@CONFIDENCE_OPTION
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def episodes_cmd(run, iteration, vs, per_episode, confidence, runs_dir, as_json):
    """Per-episode outcomes of ITER, against its parent on the shared episodes.

    ITER is a committed iteration number, a staging folder name (`4-2`) or a
    KDLoop slot archived under the run's slots/ (`slots/4-2`).
    Lists the episodes gained, lost and unchanged (success), per level or
    task group; per metric the paired mean difference with a bootstrap CI;
    for success the exact McNemar p-value; and a verdict in the metric's
    better direction (the executor's declaration; none for a metric without
    one): better, worse or indistinguishable at the stated confidence. Then
    ITER's failed episodes per level with their termination reason and first
    failing firing, and the findings: the failure summary (termination
    reasons x level, the most frequent last agent firing before a failure)
    and the executor's probe findings. An iteration without a parent
    (iteration 0) gets the failures only, unless --vs names one.

    --metrics adds one table of every episode: its id, level (task group),
    success, termination reason and each metric the executor declares, headed
    with its better direction (higher or lower); then per level and over all
    episodes the successes, the termination reasons and each metric's mean.
    Against a parent or --vs ITER the table holds the shared episodes with
    both values (A→B) and marks each change ↑ better or ↓ worse in the
    metric's direction. With --json the same table is `per_episode`:
    `metrics` (name, direction), `episodes` (rows; `vs` and `change` when
    compared), `levels` and `all` (aggregates).
    """
    from harness.rundir.evidence import episodes_view
    from harness.rundir.layout import resolve_run

    view = episodes_view(resolve_run(run, runs_dir), iteration, vs, confidence, per_episode=per_episode)
    emit(rounded(view), as_json, view["text"])


@click.command("episode")
@click.argument("run")
@click.argument("iteration", metavar="ITER")
@click.argument("episode", metavar="EPISODE")
@click.option("--tick", type=click.IntRange(min=0), default=None,
              help="Only this tick, with the executor's rendering of the state (replayed from the episode's seed).")
@click.option("--ticks", "tick_range", default=None, metavar="A:B",
              help="Only ticks A to B, both included (`A:` to the end, `:B` from the start).")
@click.option("--node", "nodes", multiple=True, metavar="NAME",
              help="Only this node's firings (repeatable); the observation only when the simulator node is named.")
@click.option("--arrays", type=click.Choice(["full", "shape"]), default="full", show_default=True,
              help="shape: each array as its dtype and shape only, its bytes (base64) left out; "
                   "--tick T renders the state instead.")
@click.option("--max-bytes", type=click.IntRange(min=0), default=None,
              help="Refuse a trace whose shown ticks pass this many bytes of JSON, saying how to narrow it "
                   f"(0: no limit; default {JSON_TRACE_MAX_BYTES:,} with --json, what a coding agent's tool shows "
                   f"of one command's output, else {TRACE_MAX_BYTES:,}).")
@click.option("--vs", "vs", default=None, metavar="ITER",
              help="Also find where this episode's trace departs from ITER's (first tick, first node firing).")
@click.option("--html", "html", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the episode viewer to this HTML file (with --vs, both episodes side by side).")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def episode_cmd(run, iteration, episode, tick, tick_range, nodes, arrays, max_bytes, vs, html, runs_dir, as_json):
    """A readable trace of one EPISODE (an episode id, e.g. BabyAI-GoTo-v0:1003,
    or a unique prefix) of ITER: per tick the observation summary, each node's
    outputs and the actions. With --vs, the first tick and node firing where
    the two candidates' traces diverge, and the first tick whose actions differ.
    With --html, the same episode as a replay to step through in a browser
    (the executor's picture of the state per tick, every firing's inputs and
    outputs), one self-contained file. --ticks and --node narrow the trace
    (values stay whole); --arrays shape leaves the arrays' bytes out. The JSON's
    `ticks_total` and `size` (ticks, firings, bytes shown and unfiltered) say
    what was left out. A trace larger than --max-bytes is refused with its
    size, each node's share and the ways to narrow it (with --json the limit is
    what a coding agent's tool shows of one output).
    """
    from harness.rundir.evidence import episode_view, render_episode
    from harness.rundir.layout import resolve_run
    from harness.rundir.records import read_record

    paths = resolve_run(run, runs_dir)
    executor = read_record("manifest", paths.manifest)["executor"]
    if tick is not None and tick_range is not None:
        raise UserError("give --tick or --ticks, not both")
    if html is not None:
        from harness.report.write import check_viewer_path

        check_viewer_path(html)
    if max_bytes is None:
        max_bytes = JSON_TRACE_MAX_BYTES if as_json else TRACE_MAX_BYTES
    view = episode_view(paths, iteration, episode, tick, vs, executor, tick_range=_tick_range(tick_range),
                        nodes=tuple(nodes), arrays=arrays, max_bytes=max_bytes)
    text = render_episode(view)
    if tick_range is not None or nodes or arrays != "full":
        size = view["size"]
        text += (f"\nshown: {size['ticks']} of {view['ticks_total']} ticks, {size['firings']} of "
                 f"{size['firings_total']} firings, {size['bytes']} of {size['bytes_unfiltered']} bytes "
                 "(--ticks / --node / --arrays)")
    if html is not None:
        from harness.report.write import write_episode_html

        view["html"] = str(write_episode_html(paths, iteration, episode, vs, executor, html))
        text += f"\nviewer: {view['html']}"
    emit(view, as_json, text)


def _tick_range(text: str | None) -> tuple[int | None, int | None] | None:
    """`A:B`, `A:` or `:B` -> (A, B) with None for an open end."""
    if text is None:
        return None
    low, sep, high = text.partition(":")
    try:
        bounds = tuple(int(v) if v.strip() else None for v in (low, high))
    except ValueError:
        bounds = None
    if not sep or bounds is None or any(b is not None and b < 0 for b in bounds):
        raise UserError(f"--ticks {text!r}: give A:B with ticks >= 0 (A: or :B for an open end)")
    return bounds


@click.command("outputs")
@click.argument("run")
@click.argument("iteration", metavar="ITER")
@click.argument("node", metavar="NODE")
@click.option("--port", default=None, metavar="P", help="Only this output port (default: every port of NODE).")
@click.option("--vs", "vs", default=None, metavar="ITER", help="The same counts for this iteration, beside ITER's.")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def outputs_cmd(run, iteration, node, port, vs, runs_dir, as_json):
    """What NODE put out over ITER's whole evaluation, from the episode logs.

    Per output port: the count of each value over every firing of every
    episode, with the episodes it came from, and the counts per group
    (level); numbers also get mean, min and max (with more than 20 distinct
    values, only those). With --vs, the same for another iteration beside it.
    """
    from harness.rundir.layout import resolve_run
    from harness.rundir.outputs import outputs_view

    view = outputs_view(resolve_run(run, runs_dir), iteration, node, port, vs)
    emit(rounded(view), as_json, view["text"])


@click.command("certify")
@click.argument("run")
@click.option("--reruns", type=click.IntRange(min=1), default=3, show_default=True,
              help="Reruns of iteration 0 and of the best (no cache) on the run's rerun tier: the executor "
                   "profile's `rerun_tier` (LIBERO: protocol), else the run's performance tier; the run's "
                   "--eval-episodes cap (or --rerun-episodes) applies. `--dry-run` names the tier.")
@click.option("--holdout-episodes", type=click.IntRange(min=1), default=None,
              help="Only N episodes of the sealed holdout tier, taken round-robin over its groups (default: all).")
@click.option("--rerun-episodes", type=click.IntRange(min=1), default=None,
              help="Only N episodes of the rerun tier in each rerun, taken round-robin over its groups "
                   "(default: the run's --eval-episodes cap, else all).")
@click.option("--episodes", "episodes", type=click.Choice(["auto", "tier", "fresh"]), default="auto", show_default=True,
              help="Rerun episodes: the tier's, fresh ones (R2R: unused instructions of the same split; EQA: unused "
                   "questions of the same split; LIBERO: unused initial states of the same tasks; else shifted "
                   "seeds), or auto: fresh when two reruns on the tier's episodes show the agents are deterministic "
                   "(when none can be drawn, the certification says why).")
@click.option("--fresh-seeds", is_flag=True, help="The same as --episodes fresh.")
@click.option("--dry-run", is_flag=True,
              help="Run nothing: print the tiers, episode counts, reruns and the estimated cost and time.")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
@interruptible(lambda kw: "the run is consistent: no certification.json was written; run "
                          f"`architect certify {kw['run']}` again to certify")
def certify_cmd(run, reruns, holdout_episodes, rerun_episodes, episodes, fresh_seeds, dry_run, runs_dir, as_json):
    """End-of-run certification: re-evaluate iteration 0 and the best (mean ±
    sd, Δ), then both on the sealed holdout with a paired test; writes and
    commits RUN/certification.json. Run it when the search has stopped: its
    holdout figures must never reach a proposer (do not read the file while
    proposing)."""
    mode = "fresh" if fresh_seeds else episodes
    if dry_run:
        from harness.rundir.certify_plan import certify_plan, render
        from harness.rundir.layout import resolve_run
        from harness.rundir.run import Run

        opened = Run(resolve_run(run, runs_dir))
        opened.rerun_episodes = rerun_episodes
        plan = certify_plan(opened, reruns=reruns, holdout_episodes=holdout_episodes, episodes=mode)
        text = render(plan)
        return emit(dict(plan, ok=True, dry_run=True, text=text), as_json, text)
    from harness.rundir.certify import certify, render
    from harness.rundir.run import open_run

    with open_run(run, runs_dir) as opened:
        opened.rerun_episodes = rerun_episodes
        record = certify(opened, reruns=reruns, holdout_episodes=holdout_episodes, episodes=mode, progress=True)
    text = render(record)
    emit(dict(rounded(record), text=text), as_json, text)  # (`text`: the lines the human output prints)


def register(main: click.Group) -> None:
    main.add_command(episodes_cmd)
    main.add_command(episode_cmd)
    main.add_command(outputs_cmd)
    main.add_command(certify_cmd)

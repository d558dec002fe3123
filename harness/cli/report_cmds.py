"""`architect report`: a self-contained HTML report of a run, or of several runs side by side, or
the variant × executor matrix of several runs; `--watch` rewrites a run's report as it progresses."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.conventions import JSON_OPTION, RUNS_DIR_OPTION, UserError, emit, handled, progress_say


def _episode_ref(text: str) -> tuple[int, str]:
    number, _, episode = text.partition(":")
    if not number.isdigit() or not episode:
        raise UserError(f"--episode {text!r}: give ITER:EPISODE, e.g. 3:BabyAI-GoTo-v0:1003")
    return int(number), episode


@click.command("report")
@click.argument("runs", nargs=-1, required=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The HTML file to write [default: <runs dir>/_reports/<run id>.html].")
@click.option("--compare", is_flag=True, help="Put several runs on one page (summary table, overlaid figures).")
@click.option("--matrix", is_flag=True,
              help="Lay the runs out as a table: rows = variants, columns = executors, each cell linking to "
                   "its run's report (written beside the page, in <name>_runs/).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="With --matrix: also write its figures as CSV, one row per run.")
@click.option("--latex", "latex_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="With --matrix: also write it as a LaTeX tabular.")
@click.option("--replays", type=click.IntRange(min=0), default=None,
              help="Gained / lost episodes replayed per iteration (first ones, gained before lost) [default: 5].")
@click.option("--episode", "episodes", multiple=True, metavar="ITER:EPISODE",
              help="Also replay this episode of iteration ITER (beside its parent's); repeatable.")
@click.option("--watch", is_flag=True,
              help="Rewrite the report whenever an iteration lands while a loop works on RUN; the page "
                   "reloads itself until the loop stops (Ctrl-C stops watching, not the loop).")
@click.option("--interval", type=click.FloatRange(min=0.1), default=5.0, show_default=True,
              help="With --watch: seconds between looks at the run (and the page's reload period).")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def report_cmd(runs, output, compare, matrix, csv_path, latex_path, replays, episodes, watch, interval, runs_dir,
               as_json):
    """Write one HTML file (no network needed to view it) for RUN: score
    trajectory with 95% CIs, parent lineage and best-so-far line, intervention
    axis shares, the ledger, each iteration's patch and text diff against its
    parent, a replay of its gained / lost episodes beside the parent's (the
    executor's picture of the state per tick, each firing's inputs and
    outputs, the first divergent tick marked), reruns and certification. The
    figures are also written as PNG and SVG next to it (<name>_figures/).
    With --compare, several runs on one page; with --matrix, the variant ×
    executor table of several runs."""
    from harness.report import write

    if (csv_path or latex_path) and not matrix:
        raise UserError("--csv and --latex belong to --matrix")
    if sum((compare, matrix, watch)) > 1:
        raise UserError("--compare, --matrix and --watch are separate kinds of report: give one")
    if (compare or matrix) and (episodes or replays is not None):
        raise UserError("--replays and --episode belong to one run's report (not --compare or --matrix)")
    chosen = [_episode_ref(e) for e in episodes]
    count = write.REPLAYS if replays is None else replays
    if matrix:
        result = write.write_matrix(list(runs), output=output, runs_dir=runs_dir, csv_path=csv_path,
                                    latex_path=latex_path)
        extra = "".join(f"\n{k}: {result[k]}" for k in ("csv", "latex") if k in result)
        emit(result, as_json, human=f"matrix: {result['matrix']}{extra}")
        return
    if watch:
        if len(runs) != 1:
            raise UserError(f"--watch follows one RUN ({len(runs)} given)")
        result = write.watch_report(runs[0], output=output, runs_dir=runs_dir, interval=interval, replays=count,
                                    episodes=chosen, say=progress_say())
        emit(result, as_json, human=f"report: {result.get('report')} ({result['writes']} writes)")
        return
    result = write.write_report(list(runs), compare=compare, output=output, runs_dir=runs_dir, replays=count,
                                episodes=chosen)
    emit(result, as_json, human=f"report: {result['report']}\nfigures: {Path(result['figures'][0]).parent}")


def register(main: click.Group) -> None:
    main.add_command(report_cmd)

"""`architect report`: a self-contained HTML report of a run, or of several runs side by side."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.conventions import JSON_OPTION, RUNS_DIR_OPTION, emit, handled


@click.command("report")
@click.argument("runs", nargs=-1, required=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The HTML file to write [default: <runs dir>/_reports/<run id>.html].")
@click.option("--compare", is_flag=True, help="Put several runs on one page (summary table, overlaid figures).")
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def report_cmd(runs, output, compare, runs_dir, as_json):
    """Write one HTML file (no network needed to view it) for RUN: score
    trajectory with 95% CIs, parent lineage and best-so-far line, intervention
    axis shares, the ledger, each iteration's patch and text diff against its
    parent, reruns and certification. The figures are also written as PNG and
    SVG next to it (<name>_figures/). With --compare, several runs on one page."""
    from harness.report.write import write_report

    result = write_report(list(runs), compare=compare, output=output, runs_dir=runs_dir)
    emit(result, as_json, human=f"report: {result['report']}\nfigures: {Path(result['figures'][0]).parent}")


def register(main: click.Group) -> None:
    main.add_command(report_cmd)

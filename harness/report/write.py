"""Write a report: the HTML page and its figures as PNG and SVG files."""

from __future__ import annotations

from pathlib import Path

from harness.errors import UserError
from harness.fileio import write_text_atomic
from harness.report import figures
from harness.report.collect import collect_run
from harness.report.page import compare_page, run_page
from harness.roots import reports_dir
from harness.rundir.layout import resolve_run


def default_output(run_ids: list[str], runs_dir: Path | None) -> Path:
    """<runs dir>/_reports/<run id>.html, or compare-<id>-<id>….html for several runs."""
    name = run_ids[0] if len(run_ids) == 1 else "compare-" + "-".join(run_ids)
    return reports_dir(Path(runs_dir) if runs_dir is not None else None) / f"{name[:150]}.html"


def write_report(refs: list[str], *, compare: bool, output: Path | None, runs_dir: Path | None) -> dict:
    if compare and len(refs) < 2:
        raise UserError("--compare needs at least two runs")
    if not compare and len(refs) != 1:
        raise UserError(f"one RUN per report ({len(refs)} given); pass --compare to put several runs on one page")
    runs = [collect_run(resolve_run(ref, runs_dir)) for ref in refs]
    if output is None:
        output = default_output([r.run_id for r in runs], runs_dir)
    output = Path(output)
    if output.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"-o {output}: the report is an HTML file (name it *.html)")
    html, figs = compare_page(runs) if compare else run_page(runs[0])
    folder = output.with_name(output.stem + "_figures")
    try:
        written = [str(p) for name, fig in figs.items() for p in figures.export(fig, folder, name)]
        write_text_atomic(output, html)
    except OSError as exc:
        raise UserError(f"cannot write the report to {output}: {exc.strerror or exc}") from None
    finally:
        for fig in figs.values():
            figures.close(fig)
    return {"ok": True, "report": str(output.resolve()), "figures": written,
            "runs": [str(r.root) for r in runs], "iterations": {r.run_id: len(r.iterations) for r in runs}}

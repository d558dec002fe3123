"""Write a report: the HTML page and its figures as PNG and SVG files."""

from __future__ import annotations

import time
from pathlib import Path

from harness.errors import UserError
from harness.fileio import write_text_atomic
from harness.report import figures
from harness.report.collect import collect_run
from harness.report.page import compare_page, episode_page, run_page
from harness.report.replays import report_replays, side
from harness.report.viewer import replay
from harness.roots import reports_dir
from harness.rundir.evidence import locate
from harness.rundir.layout import RunPaths, resolve_run


REPLAYS = 5  # gained / lost episodes replayed per iteration by default


def default_output(run_ids: list[str], runs_dir: Path | None) -> Path:
    """<runs dir>/_reports/<run id>.html, or compare-<id>-<id>….html for several runs."""
    name = run_ids[0] if len(run_ids) == 1 else "compare-" + "-".join(run_ids)
    return reports_dir(Path(runs_dir) if runs_dir is not None else None) / f"{name[:150]}.html"


def write_report(refs: list[str], *, compare: bool, output: Path | None, runs_dir: Path | None,
                 replays: int = REPLAYS, episodes: list[tuple[int, str]] = (), refresh: float | None = None) -> dict:
    """One run's report (its first REPLAYS gained / lost episodes per iteration
    replayed, and EPISODES), or with COMPARE several runs on one page."""
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
    if compare:
        html, figs = compare_page(runs)
    else:
        html, figs = run_page(runs[0], report_replays(runs[0], replays, episodes), refresh)
    written = _write_page(output, html, figs)
    return {"ok": True, "report": str(output.resolve()), "figures": written,
            "runs": [str(r.root) for r in runs], "iterations": {r.run_id: len(r.iterations) for r in runs}}


def _write_page(output: Path, html: str, figs: dict) -> list[str]:
    """The page, and its figures as PNG and SVG in <name>_figures/; the paths of the figures."""
    folder = output.with_name(output.stem + "_figures")
    try:
        written = [str(p) for name, fig in figs.items() for p in figures.export(fig, folder, name)]
        write_text_atomic(output, html)
    except OSError as exc:
        raise UserError(f"cannot write the report to {output}: {exc.strerror or exc}") from None
    finally:
        for fig in figs.values():
            figures.close(fig)
    return written


def write_matrix(refs: list[str], *, output: Path | None, runs_dir: Path | None, csv_path: Path | None = None,
                 latex_path: Path | None = None) -> dict:
    """The matrix page of RUNS (each run's own report written beside it, in <name>_runs/), and
    optionally its CSV and LaTeX forms."""
    from harness.report.matrix import cell, csv_text, latex_table
    from harness.report.page import matrix_page

    paths = [resolve_run(ref, runs_dir) for ref in refs]
    ids = [p.run_id for p in paths]
    if len(set(ids)) != len(ids):
        raise UserError(f"--matrix: a run is given twice ({', '.join(sorted({i for i in ids if ids.count(i) > 1}))})")
    output = Path(output) if output is not None else default_output(["matrix-" + "-".join(ids)], runs_dir)
    _check_suffix(output, "-o", (".html", ".htm"), "the matrix page is an HTML file (name it *.html)")
    for given, option, suffix in ((csv_path, "--csv", ".csv"), (latex_path, "--latex", ".tex")):
        if given is not None:
            _check_suffix(Path(given), option, (suffix,), f"name it *{suffix}")
    folder = output.with_name(output.stem + "_runs")
    cells, reports = [], {}
    for run in [collect_run(p) for p in paths]:  # every run read before anything is written
        report = folder / f"{run.run_id}.html"
        _write_page(report, *run_page(run, report_replays(run, REPLAYS)))
        reports[run.run_id] = str(report.resolve())
        cells.append(cell(run, f"{folder.name}/{report.name}"))
    _write(output, matrix_page(cells))
    result = {"ok": True, "matrix": str(output.resolve()), "reports": reports, "cells": cells}
    if csv_path is not None:
        _write(Path(csv_path), csv_text(cells))
        result["csv"] = str(Path(csv_path).resolve())
    if latex_path is not None:
        _write(Path(latex_path), latex_table(cells))
        result["latex"] = str(Path(latex_path).resolve())
    return result


def _check_suffix(path: Path, option: str, suffixes: tuple[str, ...], hint: str) -> None:
    if path.suffix.lower() not in suffixes:
        raise UserError(f"{option} {path}: {hint}")


def _write(path: Path, text: str) -> None:
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


def watch_report(ref: str, *, output: Path | None, runs_dir: Path | None, interval: float,
                 replays: int = REPLAYS, episodes: list[tuple[int, str]] = (), say=lambda message: None) -> dict:
    """Rewrite RUN's report whenever its ledger, state or certification changes
    while a loop works on it; the page reloads itself every INTERVAL seconds
    until the loop stops, then gets its last form (without reloading)."""
    from harness.rundir.status import run_status
    from harness.rundir.watch import following

    paths = resolve_run(ref, runs_dir)
    seen, writes, result = None, 0, None
    try:
        while True:
            live = following(run_status(ref, runs_dir))
            now = _fingerprint(paths)
            if now != seen or not live:
                try:
                    result = write_report([ref], compare=False, output=output, runs_dir=runs_dir, replays=replays,
                                          episodes=episodes, refresh=max(interval, 1.0) if live else None)
                except UserError as exc:
                    if not live:
                        raise
                    say(f"not rewritten this time: {exc.message}")  # e.g. an iteration half-committed
                else:
                    seen, writes = now, writes + 1
                    say(f"report rewritten ({writes}): {result['report']}")
            if not live:
                break
            time.sleep(interval)
    except KeyboardInterrupt:
        say("stopped watching (the loop goes on)")
    return dict(result or {"ok": True}, writes=writes)


def _fingerprint(paths) -> tuple:
    out = []
    for path in (paths.ledger, paths.state, paths.root / "certification.json"):
        try:
            stat = path.stat()
            out.append((stat.st_mtime_ns, stat.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


def check_viewer_path(output: Path) -> None:
    """Refuse an `--html` path of one episode's viewer that does not name an HTML file."""
    _check_suffix(Path(output), "--html", (".html", ".htm"), "the viewer is an HTML file (name it *.html)")


def write_episode_html(paths: RunPaths, ref: str, episode: str, vs: str | None, executor: str, output: Path) -> Path:
    """`architect episode RUN ITER EPISODE --html PATH [--vs ITER]`; `output` has passed
    `check_viewer_path` (the command checks it before reading the trace)."""
    output = Path(output)
    child = side(locate(paths, ref), episode)
    parent = side(locate(paths, vs), str(child.record["episode_id"])) if vs is not None else None
    title = f"{paths.run_id} · {child.label} · episode {child.record['episode_id']}"
    _write(output, episode_page(title, replay(executor, child, parent)))
    return output.resolve()

"""`architect report --matrix` over three small real runs (random on BabyAI,
certified; random on R2R; KDLoop's seed iteration on BabyAI): every cell shown
in Chromium, the CSV matching the runs' records, the LaTeX table; `--watch`
following a running loop; bad input."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reportkit import architect_json

from harness.rundir import ledger


@pytest.fixture(scope="module")
def matrix(report_run, nav_run, kdloop_run, tmp_path_factory):
    folder = tmp_path_factory.mktemp("matrix")
    code, out = architect_json("report", "--matrix", str(report_run), str(nav_run), str(kdloop_run),
                               "-o", str(folder / "m.html"), "--csv", str(folder / "m.csv"),
                               "--latex", str(folder / "m.tex"))
    assert code == 0, out
    return out, [report_run, nav_run, kdloop_run]


def test_csv_matches_each_runs_records(matrix):
    out, runs = matrix
    with open(out["csv"], newline="") as fh:
        rows = {r["run_id"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {r.name for r in runs}
    for run in runs:
        row = rows[run.name]
        manifest = json.loads((run / "manifest.json").read_text())
        records = ledger.read_rows(run / "ledger.jsonl")
        seed = next(r for r in records if r["iteration"] == 0 and r["status"] == "committed")
        best = ledger.best_row(records)
        assert (row["variant"], row["executor"]) == (manifest["variant"], manifest["executor"])
        assert float(row["seed_sr"]) == seed["primary"]["mean"]
        assert float(row["best_sr"]) == best["primary"]["mean"] and int(row["best_iteration"]) == best["iteration"]
        assert float(row["best_ci_low"]) == best["primary"]["ci_low"]
        assert int(row["committed"]) == sum(1 for r in records if r["status"] == "committed") - 1
        assert int(row["discarded"]) == sum(1 for r in records if r["status"] == "discarded")
        assert float(row["cost_usd"]) == pytest.approx(sum(r.get("cost_usd") or 0 for r in records), abs=1e-6)
        certification = run / "certification.json"
        if certification.exists():
            record = json.loads(certification.read_text())
            assert float(row["rerun_best_mean"]) == record["reruns"]["best"]["mean"]
            assert float(row["rerun_delta"]) == record["reruns"]["delta"]
            assert row["holdout_verdict"] == record["holdout"]["verdict"]
        else:
            assert row["rerun_best_mean"] == row["holdout_verdict"] == ""
    assert (runs[0] / "certification.json").exists()  # the certified run's columns were checked
    assert rows[runs[2].name]["variant"] == "kdloop" and rows[runs[2].name]["committed"] == "0"


def test_matrix_page_shows_every_cell_in_chromium(matrix):
    from headless_chromium import Browser
    from test_report_browser import ARTIFACTS, CHROMIUM

    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    out, runs = matrix
    browser = Browser(CHROMIUM)
    try:
        browser.open(Path(out["matrix"]).as_uri())
        cells = browser.evaluate("""(() => { const t = document.getElementById('matrix');
            const heads = [...t.rows[0].cells].map(c => c.textContent);
            const found = {};
            [...t.rows].slice(1).forEach(r => [...r.cells].slice(1).forEach((c, i) =>
                c.querySelectorAll('.run').forEach(d => { const b = d.getBoundingClientRect();
                    found[d.dataset.run] = {variant: r.cells[0].textContent, executor: heads[i + 1],
                                            href: d.querySelector('a').getAttribute('href'),
                                            text: d.textContent, width: b.width, height: b.height}; })));
            return found; })()""")
        browser.screenshot(ARTIFACTS / "matrix_screenshot.png")
        errors = browser.errors()
    finally:
        browser.close()
    assert errors == []
    assert set(cells) == {r.name for r in runs}
    for run in runs:
        cell, manifest = cells[run.name], json.loads((run / "manifest.json").read_text())
        assert (cell["variant"], cell["executor"]) == (manifest["variant"], manifest["executor"])
        assert cell["width"] > 50 and cell["height"] > 50 and "seed success_rate" in cell["text"]
        assert (Path(out["matrix"]).parent / cell["href"]).is_file()  # the cell links to the run's report
    assert "reruns: not certified" not in cells[runs[0].name]["text"]


def test_latex_table_has_a_row_per_variant(matrix):
    out, _ = matrix
    text = Path(out["latex"]).read_text()
    assert text.startswith(r"\begin{tabular}") and text.rstrip().endswith(r"\end{tabular}")
    body = [line for line in text.splitlines() if line.endswith(r"\\ \hline")]
    assert [line.split(" & ")[0] for line in body] == ["kdloop", "random"]
    assert r"success\_rate" in text and "_rate" not in text.replace(r"\_rate", "")


def test_watch_rewrites_the_page_while_a_loop_runs(report_run, tmp_path):
    from harness.report.write import watch_report
    from harness.rundir.status import run_status
    from harness.rundir.watch import following

    runs = tmp_path / "runs"
    loop = subprocess.Popen([sys.executable, "-c", "from harness.cli import main; main()", "loop", "random",
                             "babyai", "--iterations", "6", "--run-id", "live", "--runs-dir", str(runs),
                             "--smoke-episodes", "1", "--eval-episodes", "3", "--no-certify", "--json"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while not ((runs / "live" / "state.json").exists() and following(run_status("live", runs))):
            assert loop.poll() is None and time.time() < deadline, "the loop did not start"
            time.sleep(0.2)
        target = tmp_path / "live.html"
        pages = []
        result = watch_report("live", output=target, runs_dir=runs, interval=0.3,
                              say=lambda message: pages.append(target.read_text()))
    finally:
        loop.wait(timeout=300)
    assert loop.returncode == 0
    assert result["writes"] == len(pages) >= 2
    assert 'http-equiv="refresh"' in pages[0] and 'http-equiv="refresh"' not in pages[-1]
    assert pages[-1].count('class="iteration"') == 7


def test_bad_input_is_one_line_and_writes_nothing(report_run, tmp_path):
    cases = [
        (["report", str(report_run), "--csv", str(tmp_path / "a.csv")], "--matrix"),
        (["report", "--matrix", str(report_run), "-o", str(tmp_path / "m.txt")], "*.html"),
        (["report", "--matrix", str(report_run), "-o", str(tmp_path / "m.html"), "--latex", str(tmp_path / "m.csv")],
         "*.tex"),
        (["report", "--matrix", str(report_run), str(report_run), "-o", str(tmp_path / "m.html")], "twice"),
        (["report", str(report_run), "--episode", "one", "-o", str(tmp_path / "r.html")], "ITER:EPISODE"),
        (["report", str(report_run), "--episode", "9:x", "-o", str(tmp_path / "r.html")], "iteration 9"),
        (["report", "--watch", str(report_run), str(report_run)], "one RUN"),
        (["report", "--matrix", "--watch", str(report_run)], "give one"),
    ]
    for args, needle in cases:
        code, out = architect_json(*args)
        assert code != 0 and needle in out["error"] and "\n" not in out["error"], (args, out)
    assert list(tmp_path.iterdir()) == []


def test_watch_on_a_stopped_run_writes_its_final_page_once(report_run, tmp_path):
    code, out = architect_json("report", str(report_run), "--watch", "--interval", "0.1", "--replays", "0", "-o",
                               str(tmp_path / "w.html"))
    assert code == 0 and out["writes"] == 1
    assert 'http-equiv="refresh"' not in (tmp_path / "w.html").read_text()

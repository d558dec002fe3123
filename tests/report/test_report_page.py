"""`architect report`: one self-contained HTML file showing every iteration,
figures exported as PNG and SVG, several runs on one page, bad input."""

from __future__ import annotations

import re
import shutil

from click.testing import CliRunner
from reportkit import architect_json

from harness.cli import main
from harness.rundir import ledger


def test_report_is_self_contained_and_shows_every_iteration(report_run, tmp_path):
    code, out = architect_json("report", str(report_run), "-o", str(tmp_path / "r.html"))
    assert code == 0 and out["ok"]
    html = (tmp_path / "r.html").read_text()
    # nothing is fetched: no external scripts, styles, images or fonts
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html
    assert html.count("<svg") >= 2 and 'id="ledger"' in html
    rows = ledger.read_rows(report_run / "ledger.jsonl")
    committed = [r["iteration"] for r in ledger.committed(rows)]
    assert committed == list(range(len(committed))) and len(committed) == 3
    for n in committed:
        assert f'id="iteration-{n}"' in html
    for row in rows:  # every attempt, committed or discarded, is a ledger line
        assert ">" + row["status"] + "<" in html
    # the loop certified the run: reruns, Δ and the holdout verdict are shown
    assert 'id="certification"' in html and "holdout:" in html
    # each iteration after 0 against its parent: gained / lost episodes with the paired test
    assert html.count("shared episodes:") == len(committed) - 1
    for path in out["figures"]:
        data = open(path, "rb").read()
        assert data.startswith(b"\x89PNG") if path.endswith(".png") else b"<svg" in data
    assert sorted(p.rsplit("/", 1)[1] for p in out["figures"]) == ["axes.png", "axes.svg", "trajectory.png",
                                                                 "trajectory.svg"]


def test_compare_puts_runs_side_by_side(report_run, tmp_path):
    other = tmp_path / "runs" / "second"
    shutil.copytree(report_run, other)
    code, out = architect_json("report", "--compare", str(report_run), str(other), "-o", str(tmp_path / "c.html"))
    assert code == 0 and out["iterations"] == {"searched": 3, "second": 3}
    summary = (tmp_path / "c.html").read_text().split('id="summary"')[1].split("</table>")[0]
    assert "searched" in summary and "second" in summary


def test_bad_input_is_one_line_and_writes_nothing(report_run, tmp_path):
    for args, words in ((["report", str(tmp_path / "nope")], "no run at"),
                        (["report", "--compare", str(report_run)], "at least two runs"),
                        (["report", str(report_run), "-o", str(tmp_path / "r.txt")], "HTML file")):
        result = CliRunner().invoke(main, args)
        assert result.exit_code != 0 and "Traceback" not in result.output
        assert result.stderr.strip().startswith("error:") and words in result.stderr and "\n" not in result.stderr.strip()
    assert not list(tmp_path.glob("*.html")) and not (tmp_path / "r.txt").exists()

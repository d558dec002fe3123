"""The report of a real run opened in real headless Chromium (Debian's
package): no console errors, and the screenshot shows the trajectory plot and
the ledger. The screenshot is kept under tests/artifacts/ (ignored by git)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from reportkit import architect_json
from headless_chromium import Browser, find_chromium
from matplotlib.image import imread

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM = find_chromium()


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install -y chromium; "
                                             ".ci/run installs it under CI)")
def test_report_opens_in_chromium_and_shows_plot_and_ledger(report_run, tmp_path):
    code, out = architect_json("report", str(report_run), "-o", str(tmp_path / "report.html"))
    assert code == 0
    browser = Browser(CHROMIUM)
    try:
        browser.open(Path(out["report"]).as_uri())
        boxes = browser.evaluate("""(() => {
            const box = s => { const r = document.querySelector(s).getBoundingClientRect();
                               return [r.left + scrollX, r.top + scrollY, r.width, r.height]; };
            return {plot: box('#trajectory svg'), ledger: box('#ledger'),
                    rows: document.querySelectorAll('#ledger tr').length - 1,
                    iterations: document.querySelectorAll('details.iteration').length,
                    ratio: devicePixelRatio};
        })()""")
        shot = browser.screenshot(ARTIFACTS / "report_screenshot.png")
        errors = browser.errors()
    finally:
        browser.close()
    print(f"screenshot: {shot}")
    assert errors == []
    rows = (report_run / "ledger.jsonl").read_text().count("\n")
    assert boxes["rows"] == rows and boxes["iterations"] == 3
    image = imread(shot)[..., :3]
    for name in ("plot", "ledger"):
        x, y, w, h = (int(v * boxes["ratio"]) for v in boxes[name])
        assert w > 200 and h > 50, f"{name} is not laid out: {boxes[name]}"
        region = image[y:y + h, x:x + w]
        assert region.shape[0] == h and region.shape[1] == w, f"{name} lies outside the screenshot"
        ink = (region < 0.9).any(axis=2).mean()  # share of non-white pixels: drawn, not blank
        assert ink > 0.01, f"{name} region is blank in the screenshot"
    # the plot holds the series colour (matplotlib's first tab10 blue), not only black axes
    x, y, w, h = (int(v * boxes["ratio"]) for v in boxes["plot"])
    blue = np.abs(image[y:y + h, x:x + w] - np.array([0x1f, 0x77, 0xb4]) / 255).max(axis=2) < 0.08
    assert blue.sum() > 50

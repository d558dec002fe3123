"""`status` reports the best's paired verdict against the runner-up (loop.md:
a best indistinguishable from the runner-up is a near-tie), in `state.best`
and in the human summary; `end` prints the best the same way."""

from __future__ import annotations

import json

from click.testing import CliRunner

from rundir_kit import cli, git
from harness.cli import main
from harness.rundir.evidence import best_view
from harness.rundir.layout import resolve_run


def test_status_best_carries_the_runner_up_and_the_near_tie(run_dir):
    alone = cli("status", str(run_dir))["state"]["best"]
    assert alone["runner_up"] is None and alone["near_tie"] is False  # iteration 0 only: no runner-up
    cli("loop", "random", "babyai", "--run-id", run_dir.name, "--runs-dir", str(run_dir.parent), "--resume",
        "--iterations", "2", "--no-certify")
    best = cli("status", str(run_dir))["state"]["best"]
    view = best_view(resolve_run(str(run_dir), None))
    assert best["iteration"] == view["iteration"]
    assert best["runner_up"]["iteration"] == view["runner_up"]["iteration"] != best["iteration"]
    assert best["runner_up"]["verdict"] == view["runner_up"]["verdict"]
    runner = best["runner_up"]["iteration"]
    assert best["runner_up"]["verdict_of"] == f"iteration {best['iteration']} against iteration {runner}"
    assert best["near_tie"] is (view["runner_up"]["verdict"] == "indistinguishable")
    assert isinstance(best["runner_up"]["score"], float)
    up = view["runner_up"]  # (its delta: the best's mean minus the runner-up's, as delta_of says)
    assert up["delta_of"].startswith(f"iteration {view['iteration']} minus iteration {up['iteration']}")
    assert abs(up["delta"] - (view["mean"] - best["runner_up"]["score"])) < 1e-9
    summary = CliRunner().invoke(main, ["status", str(run_dir)]).output
    r = best["runner_up"]
    expected = (f"a near-tie with the runner-up, iteration {r['iteration']}" if best["near_tie"]
                else f"{r['verdict']} than the runner-up, iteration {r['iteration']}")
    assert expected in summary
    ended = CliRunner().invoke(main, ["end", str(run_dir), "--reason", "operator: the test is done", "--json"])
    ended = json.loads(ended.output)
    assert ended["state"]["best"] == best  # `end` shows the best as the status does
    assert ended["commit"] == git(run_dir, "rev-parse", "HEAD").strip()
    assert git(run_dir, "log", "-1", "--format=%s").startswith("run stopped: operator: the test is done")

"""`architect certify --dry-run`: the rerun tier by its rule, episode counts,
reruns and the cost bound, without running or writing anything; `--help`
names the rerun tier rule."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rundir_kit import cli, git
from harness.cli import main
from harness.executor_api import load_executor


def test_dry_run_counts_what_certify_would_run(run_dir):
    head = git(run_dir, "rev-parse", "HEAD")
    plan = cli("certify", str(run_dir), "--dry-run", "--reruns", "2", "--holdout-episodes", "5",
               "--episodes", "fresh")
    assert plan["dry_run"] and plan["best"] == 0
    assert plan["reruns"]["tier"] == "search" and plan["reruns"]["episodes"] == 3  # the run's --eval-episodes 3
    assert plan["reruns"]["draws"] == plan["reruns"]["draws_max"] == 2
    assert plan["holdout"] == {"tier": "holdout", "episodes": 5}
    # best is iteration 0: its reruns are iteration 0's, the holdout runs both
    assert plan["candidates"]["baseline"]["episodes"] == 2 * 3 + 5 and plan["candidates"]["best"]["episodes"] == 5
    assert plan["episodes_max"] == 16 and plan["model_calls_max"] == 0 and plan["cost_usd_max"] == 0.0
    assert plan["wall_seconds_max"] > 0  # each candidate's bound on the workers, summed
    assert plan["wall_seconds_max"] == pytest.approx(sum(c["wall_seconds"] for c in plan["candidates"].values()))
    auto = cli("certify", str(run_dir), "--dry-run", "--reruns", "2")
    assert (auto["reruns"]["draws"], auto["reruns"]["draws_max"]) == (2, 4)  # fresh reruns after two identical
    default = cli("certify", str(run_dir), "--dry-run")  # 3 reruns: the probe's two on the tier, then 3 fresh
    assert (default["reruns"]["draws"], default["reruns"]["draws_max"]) == (3, 5)
    assert git(run_dir, "rev-parse", "HEAD") == head and not (run_dir / "certification.json").exists()


def test_dry_run_names_the_profiles_rerun_tier(run_dir):
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["profiles"]["rerun_tier"] = "smoke"  # as LIBERO's profile records `protocol`
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    plan = cli("certify", str(run_dir), "--dry-run")
    smoke = len(load_executor("babyai").episodes("smoke"))
    assert plan["reruns"]["tier"] == "smoke" and plan["reruns"]["episodes"] == min(3, smoke)
    text = CliRunner().invoke(main, ["certify", str(run_dir), "--dry-run"]).output
    assert "x 3 episodes of tier smoke" in text and "rerun_tier" in text


def test_help_names_the_rerun_tier_rule():
    text = " ".join(CliRunner().invoke(main, ["certify", "--help"]).output.split())
    assert "Performance-tier reruns" not in text
    assert "rerun tier: the executor profile's `rerun_tier` (LIBERO: protocol)" in text and "--dry-run" in text


def test_the_certification_record_counts_the_episodes_of_each_rerun(run_dir):
    """What the dry run plans is what the record gives: the capped count, or the whole tier's."""
    from harness.rundir.certify import _rerun_episodes
    from harness.rundir.run import open_run

    with open_run(str(run_dir)) as run:
        assert _rerun_episodes(run, "search", 3) == cli("certify", str(run_dir), "--dry-run")["reruns"]["episodes"] == 3
        assert _rerun_episodes(run, "search", None) == len(load_executor("babyai").episodes("search"))


def test_certify_labels_the_determinism_probe_apart_from_the_reruns(run_dir, monkeypatch):
    import harness.evaluation as evaluation
    from harness.rundir import certify
    from harness.rundir.run import open_run

    labels = []

    def evaluate(candidate, tier, **kw):  # every draw alike: the agents repeat themselves
        labels.append(kw["label"])
        return {"complete": True, "primary": {"mean": 0.5}, "episodes": [{"success": True}]}

    monkeypatch.setattr(evaluation, "evaluate", evaluate)
    with open_run(str(run_dir)) as run:
        certify._reruns(run, 0, 3, "auto", False)
    assert [label.split(" of iteration")[0] for label in labels] == [
        "certify: determinism probe 1/2", "certify: determinism probe 2/2",
        "certify: rerun 1/3", "certify: rerun 2/3", "certify: rerun 3/3"]
    assert all("(fresh episodes)" in label for label in labels[2:])

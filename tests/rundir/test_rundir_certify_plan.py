"""`architect certify --dry-run`: the rerun tier by its rule, episode counts,
reruns and the cost bound, without running or writing anything, counting a
best that is the baseline once and timing each evaluation on the workers
certify gives it; certify itself runs such a best once and says so; `--help`
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
    # best is iteration 0: certify reruns it and runs it on the holdout once, and the plan counts it once
    assert plan["best_is_baseline"] is True and list(plan["candidates"]) == ["baseline"]
    assert plan["candidates"]["baseline"]["episodes"] == 2 * 3 + 5
    assert plan["episodes_max"] == 11 and plan["model_calls_max"] == 0 and plan["cost_usd_max"] == 0.0
    assert plan["wall_seconds_max"] > 0  # each candidate's bound on the workers, summed
    assert plan["wall_seconds_max"] == pytest.approx(sum(c["wall_seconds"] for c in plan["candidates"].values()))
    auto = cli("certify", str(run_dir), "--dry-run", "--reruns", "2")
    assert (auto["reruns"]["draws"], auto["reruns"]["draws_max"]) == (2, 4)  # fresh reruns after two identical
    default = cli("certify", str(run_dir), "--dry-run")  # 3 reruns: the probe's two on the tier, then 3 fresh
    assert (default["reruns"]["draws"], default["reruns"]["draws_max"]) == (3, 5)
    assert git(run_dir, "rev-parse", "HEAD") == head and not (run_dir / "certification.json").exists()


def test_dry_run_says_why_each_candidate_is_drawn_that_many_times(run_dir):
    one = cli("certify", str(run_dir), "--dry-run", "--reruns", "1")  # auto: the probe's two, then one fresh
    assert (one["reruns"]["draws"], one["reruns"]["draws_max"]) == (2, 3)
    rule = one["reruns"]["draws_rule"]
    assert "determinism probe" in rule and "takes 1 draw on fresh episodes instead (3 in all" in rule
    assert "2 draws of the tier's episodes in all, the first 1 reported" in rule
    tier = cli("certify", str(run_dir), "--dry-run", "--reruns", "3", "--episodes", "tier")["reruns"]["draws_rule"]
    assert tier.startswith("--episodes tier: 3 draws") and "reported" not in tier
    text = CliRunner().invoke(main, ["certify", str(run_dir), "--dry-run", "--reruns", "1"]).output
    assert rule in text and one["text"] == text.rstrip("\n")


def test_dry_run_counts_a_best_apart_from_the_baseline_and_times_each_evaluation_on_its_workers(
        run_dir, monkeypatch):
    import os
    import shutil

    from harness.canvas.budgets import episode_limits
    from harness.evaluation.cache import measured_seconds
    from harness.rundir import ledger
    from harness.rundir.tiers import content_hash

    monkeypatch.setattr(os, "cpu_count", lambda: 8)  # the local backend's default: one worker per core
    args = ["certify", str(run_dir), "--dry-run", "--reruns", "2", "--holdout-episodes", "5", "--episodes", "fresh"]
    alone = cli(*args)
    # the run caps its episodes at 3 (a handful): its reruns run on one worker, as certify runs them;
    # the holdout's 5 episodes all at once (8 workers, at most the episodes)
    assert alone["candidates"]["baseline"]["workers"] == {"reruns": 1, "holdout": 5}
    graph = json.loads((run_dir / "iterations/0/candidate/graph.json").read_text())
    wall = float(episode_limits(graph.get("budgets") or {}, {"level": "x"}).get("wall_seconds", 0))
    assert alone["wall_seconds_max"] == pytest.approx(2 * 3 * wall / 1 + 5 * wall / 5, abs=0.2)
    seconds = measured_seconds(content_hash(run_dir / "iterations/0/candidate"), "search")
    assert seconds  # init ran iteration 0's search episodes into the session's cache
    per = sum(seconds) / len(seconds)
    assert alone["measured"]["wall_seconds_estimate"] == pytest.approx(per * (2 * 3 / 1 + 5 / 5), abs=0.2)
    # a best that is not iteration 0 runs all of it too
    shutil.copytree(run_dir / "iterations/0", run_dir / "iterations/1")
    monkeypatch.setattr(ledger, "best_row", lambda rows: {"iteration": 1})
    both = cli(*args)
    assert both["best"] == 1 and both["best_is_baseline"] is False
    assert [c["iteration"] for c in both["candidates"].values()] == [0, 1]
    assert both["episodes_max"] == 2 * alone["episodes_max"]
    assert both["wall_seconds_max"] == pytest.approx(2 * alone["wall_seconds_max"])
    text = CliRunner().invoke(main, args).output
    assert text.startswith("certification of iteration 0 and the best (iteration 1)")


def test_certifying_a_best_that_is_the_baseline_runs_it_once_and_says_so(run_dir, monkeypatch):
    import harness.evaluation as evaluation

    real, labels = evaluation.evaluate, []

    def evaluate(candidate, tier, **kw):
        labels.append(kw["label"])
        return real(candidate, tier, **kw)

    text = CliRunner().invoke(main, ["certify", str(run_dir), "--dry-run"]).output
    assert text.startswith("certification of iteration 0, which is also the best")
    monkeypatch.setattr(evaluation, "evaluate", evaluate)
    record = cli("certify", str(run_dir), "--reruns", "1", "--holdout-episodes", "2", "--episodes", "tier")
    assert record["best"] == 0 and record["best_is_baseline"] is True
    assert [label for label in labels if "holdout" in label] == ["certify: holdout, baseline (iteration 0) · holdout"]
    assert len(labels) == 1 + 2  # the holdout once, and the two reruns of `tier` once (not per candidate)
    assert record["holdout"]["delta"] == 0 and record["reruns"]["delta"] == 0
    from harness.rundir.certify import render

    assert render(record).startswith("the best is the baseline: no later iteration was selected over iteration 0")
    assert "best_is_baseline" in json.loads((run_dir / "certification.json").read_text())


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


def test_rerun_episodes_caps_each_rerun_in_the_dry_run_and_the_certification(run_dir):
    whole = cli("certify", str(run_dir), "--dry-run", "--holdout-episodes", "2")
    assert whole["reruns"]["episodes"] == 3  # the run's --eval-episodes cap
    plan = cli("certify", str(run_dir), "--dry-run", "--holdout-episodes", "2", "--rerun-episodes", "2")
    assert plan["reruns"]["episodes"] == 2 and plan["episodes_max"] < whole["episodes_max"]
    assert "--rerun-episodes" in plan["reruns"]["tier_rule"]
    record = cli("certify", str(run_dir), "--reruns", "1", "--holdout-episodes", "2", "--rerun-episodes", "2",
                 "--episodes", "tier")
    assert record["reruns"]["episodes"] == 2 and record["reruns"]["tier"] == whole["reruns"]["tier"]
    kept = json.loads((run_dir / "certification.json").read_text())
    assert kept["reruns"]["episodes"] == 2
    # --json also gives the human output's lines (the reruns' and the holdout's), which the file does not keep
    assert "holdout" in record["text"] and "reruns" in record["text"] and "text" not in kept

"""Paired statistics, episode comparison and the sequential race."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from harness.evaluation.compare import compare_evaluations, verdict_summary
from harness.evaluation.paired import bootstrap_mean, compare, mcnemar_p, pair_by_episode
from harness.evaluation.racing import ConfidenceSequence, Race, RaceConfig, decide, race_order


def test_mcnemar_is_the_exact_binomial_test_on_discordant_pairs():
    assert mcnemar_p(10, 0) == pytest.approx(2 * 0.5 ** 10)
    assert mcnemar_p(7, 3) == pytest.approx(binomtest(7, 10, 0.5).pvalue)
    assert mcnemar_p(0, 0) == 1.0


def test_verdicts_distinguish_real_differences_from_near_ties():
    parent = [0] * 60 + [1] * 40
    big = compare(parent, [1] * 49 + [0] * 11 + [1] * 40)           # +49/−0
    assert (big.verdict, big.gained, big.lost) == ("better", 49, 0) and big.p_value < 1e-10
    tie = compare(parent, [1, 1] + [0] * 58 + [1] * 40)               # +2/−0: a near-tie
    assert tie.verdict == "indistinguishable" and tie.p_value == pytest.approx(0.5)
    worse = compare([1] * 20, [0] * 20)
    assert worse.verdict == "worse" and worse.delta == -1.0
    steps = compare([10.0] * 30, [12.0, 13.0, 11.0] * 10, metric="steps", higher_is_better=False)
    assert not steps.binary and steps.verdict == "worse" and steps.ci_low > 0


def test_no_verdict_on_a_secondary_change_whose_printed_ci_touches_zero():
    parent = [0.5] * 100
    tiny = compare(parent, [0.5 - 0.0003] * 95 + [0.5] * 5, metric="ndtw")  # Δ ≈ -0.0003, CI all below 0
    assert tiny.ci_high < 0 and tiny.verdict == "indistinguishable" and "-0.000" in tiny.text()
    clear = compare(parent, [0.49] * 100, metric="ndtw")
    assert clear.verdict == "worse"


def test_paired_bootstrap_ci_covers_the_mean_difference():
    rng = np.random.default_rng(1)
    diff = rng.normal(0.3, 1.0, size=200)
    low, median, high = bootstrap_mean(diff, seed=2)
    assert low < diff.mean() < high and low < median < high
    with pytest.raises(ValueError):
        bootstrap_mean([])


def _records(successes, prefix="L"):
    return [{"episode_id": f"{prefix}{i % 2}:{i}", "level": f"{prefix}{i % 2}", "success": bool(s),
             "infra_error": None, "steps": 10 + i, "metrics": {}} for i, s in enumerate(successes)]


def test_gained_and_lost_lists_match_a_recount_of_the_per_episode_records():
    rng = np.random.default_rng(3)
    a_s, b_s = rng.random(40) < 0.4, rng.random(40) < 0.6
    a = {"primary": {"metric": "success_rate"}, "secondary": {"steps": 0}, "episodes": _records(a_s)}
    b = {"primary": {"metric": "success_rate"}, "secondary": {"steps": 0}, "episodes": _records(b_s)}
    b["episodes"][5]["infra_error"] = "worker died"  # not a shared, scored episode
    result = compare_evaluations(a, b)
    scored = [i for i in range(40) if i != 5]
    assert result["episodes"]["gained"] == [f"L{i % 2}:{i}" for i in scored if b_s[i] and not a_s[i]]
    assert result["episodes"]["lost"] == [f"L{i % 2}:{i}" for i in scored if a_s[i] and not b_s[i]]
    assert result["shared"] == 39
    for group in ("L0", "L1"):
        ids = [i for i in scored if i % 2 == int(group[1])]
        g = result["groups"][group]
        assert g["gained"] == sum(1 for i in ids if b_s[i] and not a_s[i]) and g["episodes"] == len(ids)
    primary = result["metrics"]["success_rate"]
    assert primary["gained"] == len(result["episodes"]["gained"])
    assert primary["p_value"] == pytest.approx(mcnemar_p(primary["gained"], primary["lost"]))
    # no executor named: `steps` has no declared direction, so it is compared without a verdict
    assert result["metrics"]["steps"]["delta"] == 0.0 and result["metrics"]["steps"]["verdict"] is None
    assert "no verdict" in result["metrics"]["steps"]["text"]
    assert verdict_summary(a, b)["verdict"] == result["verdict"]


def _r2r(instr: str, success: bool, **metrics) -> dict:
    return {"episode_id": instr, "level": None, "success": success, "infra_error": None, "steps": 5,
            "metrics": metrics}


def test_metric_directions_come_from_the_executor_spec():
    """mapgpt declares nav_error and trajectory_length lower-is-better; a metric it does not
    declare gets no verdict, whichever way it moves."""
    n = 30
    a = {"executor": "mapgpt", "primary": {"metric": "success_rate"},
         "episodes": [_r2r(f"{i}_0", False, nav_error=6.0, trajectory_length=9.0, spl=0.0, extra=1.0)
                      for i in range(n)]}
    b = {"executor": "mapgpt", "primary": {"metric": "success_rate"},
         "episodes": [_r2r(f"{i}_0", False, nav_error=3.0 - 0.01 * i, trajectory_length=20.0 + 0.01 * i, spl=0.0,
                           extra=5.0 + 0.01 * i) for i in range(n)]}
    result = compare_evaluations(a, b, metrics=["nav_error", "trajectory_length", "spl", "extra"])
    by = result["metrics"]
    assert by["nav_error"]["delta"] < 0 and by["nav_error"]["higher_is_better"] is False
    assert by["nav_error"]["verdict"] == "better"            # a smaller error is better
    assert by["trajectory_length"]["verdict"] == "worse"     # a longer path is worse
    assert by["spl"]["verdict"] == "indistinguishable" and by["spl"]["higher_is_better"] is True
    assert by["extra"]["verdict"] is None and by["extra"]["higher_is_better"] is None
    assert result["metrics"]["success_rate"]["higher_is_better"] is True
    # the same records under an executor that declares `extra` higher-is-better: now it has a verdict
    assert compare_evaluations(a, b, metrics=["extra"], directions={"extra": "higher"})["metrics"]["extra"][
        "verdict"] == "better"


def test_pairing_uses_episode_ids_not_positions():
    a = [{"episode_id": "x", "success": True}, {"episode_id": "y", "success": False}]
    b = [{"episode_id": "y", "success": True}, {"episode_id": "z", "success": True}]
    assert pair_by_episode(a, b) == [(a[1], b[0])]


def test_race_stops_early_on_a_large_difference_and_agrees_with_the_fixed_test():
    rng = np.random.default_rng(5)
    parent = (rng.random(100) < 0.4).astype(float)
    child = parent.copy()
    child[np.flatnonzero(parent == 0)[:45]] = 1.0                     # +45/−0
    race = Race(RaceConfig(batch=10))
    for start in range(0, 100, 10):
        if race.add(parent[start:start + 10], child[start:start + 10]):
            break
    assert race.verdict == "better" == compare(parent, child).verdict and race.cs.n <= 40


def test_race_on_identical_candidates_ends_indistinguishable_never_better():
    zeros = np.zeros(100)
    race = Race(RaceConfig(margin=0.1))
    for start in range(0, 100, 10):
        race.add(zeros[start:start + 10], zeros[start:start + 10])
    assert race.finish() == "indistinguishable" and race.decided_by == "sequential"


def test_confidence_sequence_rarely_excludes_zero_under_the_null():
    rng = np.random.default_rng(7)
    false = 0
    for _ in range(30):
        a, b = rng.random(60) < 0.5, rng.random(60) < 0.5
        cs = ConfidenceSequence(alpha=0.05)
        for start in range(0, 60, 10):
            cs.update(b[start:start + 10].astype(float) - a[start:start + 10].astype(float))
            if decide(*cs.interval(), margin=0.0) in ("better", "worse"):
                false += 1
                break
    assert false <= 4  # ≤ 5 % expected; a generous bound on 30 repetitions
    assert race_order(["a", "b", "c", "d"], 1) == race_order(["a", "b", "c", "d"], 1)
    with pytest.raises(ValueError):
        RaceConfig(alpha=0.7).check()


def test_a_printed_comparison_names_the_verdicts_own_test_and_marks_the_other_interval_descriptive():
    from harness.evaluation.paired import compare

    binary = compare([0, 0, 0, 0, 0, 1, 1, 1], [1, 1, 1, 0, 0, 1, 1, 1])   # +3/−0: McNemar p = 0.25
    text = binary.text()
    assert binary.verdict == "indistinguishable" and binary.ci_role == "descriptive"
    assert "indistinguishable (McNemar p=0.25, +3/−0)" in text and "descriptive bootstrap 95% CI" in text
    assert text.index("McNemar") < text.index("descriptive")
    graded = compare([0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8])
    assert graded.ci_role == "verdict" and graded.to_dict()["ci_role"] == "verdict"
    assert "better (Δ +0.400, paired bootstrap 95% CI" in graded.text() and "McNemar" not in graded.text()

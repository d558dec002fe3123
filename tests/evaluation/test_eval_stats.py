"""Confidence intervals and the smoke gate on hand-made metrics."""

from __future__ import annotations

import pytest

from harness.evaluation import smoke_gate
from harness.evaluation.stats import summarize_primary, t_interval, wilson_interval


@pytest.mark.parametrize("k,n,lo,hi", [(0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (10, 10, 0.7225, 1.0),
                                       (39, 100, 0.3004, 0.4876)])
def test_wilson_interval_matches_published_values(k, n, lo, hi):
    got = wilson_interval(k, n)
    assert got == pytest.approx((lo, hi), abs=5e-4)


def test_primary_picks_wilson_for_binary_and_t_otherwise():
    binary = summarize_primary("success_rate", [1.0, 0.0, 1.0, 1.0])
    assert binary["ci_method"] == "wilson" and binary["mean"] == 0.75
    spl = summarize_primary("spl", [0.2, 0.4, 0.9])
    assert spl["ci_method"] == "student-t"
    lo, hi = spl["ci95"]
    assert lo < spl["mean"] < hi and (lo, hi) == pytest.approx(t_interval([0.2, 0.4, 0.9]))
    # t quantile for 2 degrees of freedom is 4.303; sample variance 0.13
    assert hi - spl["mean"] == pytest.approx(4.3027 * 0.13 ** 0.5 / 3 ** 0.5, abs=1e-3)
    assert summarize_primary("success_rate", [])["mean"] is None


def _metrics(**overrides):
    ep = {"episode_id": "L:1", "steps": 3, "error": None, "infra_error": None, "termination": "success"}
    base = {"episodes": [ep], "complete": True, "infra_failures": 0,
            "primary": {"metric": "success_rate", "mean": 1.0}}
    base.update(overrides)
    return base


def test_smoke_gate_reasons():
    assert smoke_gate(_metrics()) == {"passed": True, "reasons": []}
    zero = _metrics(episodes=[{"episode_id": "L:2", "steps": 0, "error": None, "infra_error": None,
                               "termination": "no_action"}])
    assert not smoke_gate(zero)["passed"] and "L:2" in smoke_gate(zero)["reasons"][0]
    assert "incomplete" in smoke_gate(_metrics(complete=False, infra_failures=1))["reasons"][0]
    assert "no valid value" in smoke_gate(_metrics(primary={"metric": "success_rate", "mean": None}))["reasons"][0]
    assert smoke_gate(_metrics(episodes=[]))["reasons"][0] == "no episodes were run"

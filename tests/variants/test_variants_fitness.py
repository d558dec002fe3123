import re

import numpy as np
import pytest
from scipy import stats

from harness.errors import UserError
from harness.variants.fitness import (
    BootstrapCI,
    bootstrap_ci,
    episode_scores,
    fitness_for,
    format_bootstrap,
)

PATTERN = re.compile(r"^95% Bootstrap Confidence Interval: \((\d+\.\d)%, (\d+\.\d)%\), Median: (\d+\.\d)%$")


def test_text_has_the_adas_format_with_one_decimal():
    assert format_bootstrap(BootstrapCI(0.12345, 0.5, 0.30049, 10, 1)) == (
        "95% Bootstrap Confidence Interval: (12.3%, 50.0%), Median: 30.0%")
    text = bootstrap_ci([1, 0, 1, 1, 0, 0, 0, 1, 1, 1]).text()
    assert PATTERN.match(text), text


def test_binary_scores_match_the_exact_binomial_quantiles():
    # The mean of a resample of n binary scores with k ones is Binomial(n, k/n)/n,
    # so the bootstrap percentiles are its quantiles up to one grid step (1/n).
    n, k = 100, 37
    ci = bootstrap_ci([1.0] * k + [0.0] * (n - k), seed=3)
    assert ci.resamples == 100_000 and ci.n == n
    for got, q in ((ci.low, 0.025), (ci.median, 0.5), (ci.high, 0.975)):
        exact = stats.binom.ppf(q, n, k / n) / n
        assert abs(got - exact) <= 1.0 / n + 1e-12, (q, got, exact)


def test_continuous_scores_agree_with_scipy_percentile_bootstrap():
    rng = np.random.default_rng(11)
    scores = rng.gamma(2.0, 1.0, size=60)
    ci = bootstrap_ci(scores, seed=5)
    ref = stats.bootstrap((scores,), np.mean, n_resamples=100_000, method="percentile",
                          confidence_level=0.95, random_state=np.random.default_rng(9)).confidence_interval
    # Monte-Carlo error of a 2.5% percentile from 1e5 resamples is ~0.01 standard
    # errors of the mean; two independent estimates differ by ~0.012 SE. Allow 5x.
    se = scores.std(ddof=1) / np.sqrt(scores.size)
    assert abs(ci.low - ref.low) < 0.06 * se
    assert abs(ci.high - ref.high) < 0.06 * se
    assert abs(ci.median - np.mean(scores)) < 0.06 * se + 1e-9


def test_zero_scoring_run_is_data_not_an_error():
    ci = bootstrap_ci([0.0] * 25)
    assert ci.text() == "95% Bootstrap Confidence Interval: (0.0%, 0.0%), Median: 0.0%"


def test_seeded_and_chunk_independent():
    scores = [1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1]
    assert bootstrap_ci(scores, seed=1) == bootstrap_ci(scores, seed=1)
    odd = bootstrap_ci(scores, resamples=25_001, seed=2)  # not a multiple of the chunk size
    assert odd.resamples == 25_001 and 0.0 <= odd.low <= odd.median <= odd.high <= 1.0


def test_rejects_empty_and_non_finite_scores():
    with pytest.raises(UserError, match="no per-episode scores"):
        bootstrap_ci([])
    with pytest.raises(UserError, match="NaN"):
        bootstrap_ci([1.0, float("nan")])


def test_episode_scores_skip_infrastructure_failures_and_read_success():
    metrics = {"primary": {"metric": "success_rate"}, "episodes": [
        {"success": True, "infra_error": None, "metrics": {}},
        {"success": False, "infra_error": "worker died", "metrics": {}},
        {"success": False, "infra_error": None, "metrics": {}},
    ]}
    assert episode_scores(metrics) == [1.0, 0.0]
    with pytest.raises(UserError, match="episodes"):
        episode_scores({"primary": {}})


def test_fitness_per_variant():
    metrics = {"primary": {"metric": "success"}, "episodes": [{"success": s} for s in (1, 1, 0, 0)]}
    adas = fitness_for("adas", metrics)
    assert PATTERN.match(adas["text"]) and adas["score_percent"] == 50.0
    assert fitness_for("aflow", metrics)["text"] == "Mean score: 50.0%"

"""Summary statistics of per-episode scores: means and 95 % confidence intervals.

Binary scores (success) get a Wilson score interval, which stays inside [0, 1]
and behaves at 0 % and 100 %; other scores get a Student-t interval.
"""

from __future__ import annotations

import math
from typing import Iterable

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (n == 0 gives (0, 1))."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def t_interval(values: list[float], confidence: float = 0.95) -> tuple[float, float]:
    """Student-t interval for the mean (a single value gives a zero-width interval)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, mean
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    if var == 0:
        return mean, mean
    from scipy import stats as scipy_stats  # slow to import; only needed for non-binary metrics

    half = scipy_stats.t.ppf(0.5 + confidence / 2, n - 1) * math.sqrt(var / n)
    return mean - half, mean + half


def is_binary(values: Iterable[float]) -> bool:
    return all(v in (0, 1) for v in values)


def summarize_primary(name: str, values: list[float]) -> dict:
    """Mean, 95 % CI and the method used, for the primary metric."""
    n = len(values)
    if n == 0:
        return {"metric": name, "mean": None, "ci95": None, "ci_method": None, "n": 0}
    mean = sum(values) / n
    if is_binary(values):
        lo, hi = wilson_interval(int(sum(values)), n)
        method = "wilson"
    else:
        lo, hi = t_interval(values)
        method = "student-t"
    return {"metric": name, "mean": mean, "ci95": [lo, hi], "ci_method": method, "n": n}


def mean_or_none(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None

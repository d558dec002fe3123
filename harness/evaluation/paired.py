"""Paired comparison of two candidates evaluated on the same episodes.

The one place where "is the child better than its parent?" is decided:

- success (0/1 per episode): the exact McNemar test, a two-sided binomial test
  on the discordant pairs (episodes one candidate solved and the other did not);
- any metric: a paired percentile bootstrap CI of the mean difference (B − A);
- a verdict, `better`, `worse` or `indistinguishable`, at a stated confidence
  (binary metrics: McNemar p < 1 − confidence; other metrics: the CI excludes 0, neither bound
  printing as ±0.000);
  none (`None`) for a metric whose better direction nobody declared.

Small API, plain data (`PairedComparison.to_dict()`), no run-directory
knowledge: callers pair the episodes (`pair_by_episode`) and say which
direction is better.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 10_000
VERDICTS = ("better", "worse", "indistinguishable")
SHOWN_ZERO = 0.0005  # the smallest CI bound `text` prints as non-zero ({:+.3f})
# Rows of resampled indices drawn at once: bounds memory at ~chunk × n integers.
_CHUNK = 10_000
# Up to this many distinct values the resample counts are drawn per distinct
# value (multinomial) instead of per episode: same distribution, O(k) per row.
_FEW_VALUES = 32


def bootstrap_mean(values: Sequence[float], *, confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                   seed: int = 0) -> tuple[float, float, float]:
    """(low, median, high): percentiles of the bootstrap distribution of the mean.

    Raises ValueError on an empty or non-finite input."""
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("no per-episode scores to resample")
    if not np.all(np.isfinite(x)):
        raise ValueError("per-episode scores contain NaN or infinity")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    rng = np.random.default_rng(seed)
    n = x.size
    distinct, counts = np.unique(x, return_counts=True)
    means = np.empty(resamples)
    for start in range(0, resamples, _CHUNK):
        rows = min(start + _CHUNK, resamples) - start
        if distinct.size <= _FEW_VALUES:
            draws = rng.multinomial(n, counts / n, size=rows)
            means[start:start + rows] = draws @ distinct / n
        else:
            means[start:start + rows] = x[rng.integers(0, n, size=(rows, n))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, median, high = np.percentile(means, [tail, 50.0, 100.0 - tail])
    return float(low), float(median), float(high)


def mcnemar_p(gained: int, lost: int) -> float:
    """Exact two-sided McNemar p-value: binomial test of `gained` out of the
    discordant pairs against 1/2 (1.0 when there are none)."""
    if gained + lost == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(gained, gained + lost, 0.5, alternative="two-sided").pvalue)


@dataclass(frozen=True)
class PairedComparison:
    """B against A on `n` shared episodes (`delta` = mean(B) − mean(A))."""

    metric: str
    n: int
    mean_a: float | None
    mean_b: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    binary: bool
    gained: int | None      # binary only: episodes B solved and A did not
    lost: int | None        # binary only: episodes A solved and B did not
    p_value: float | None   # binary only: exact McNemar
    confidence: float
    higher_is_better: bool | None   # None: no direction declared, so no verdict
    verdict: str | None
    test: str

    @property
    def ci_role(self) -> str:
        """"verdict": the CI is the verdict's own test; "descriptive": the verdict
        comes from McNemar and the CI only describes the size of Δ."""
        return "descriptive" if self.binary else "verdict"

    def to_dict(self) -> dict:
        return asdict(self) | {"ci_role": self.ci_role, "text": self.text()}

    def text(self) -> str:
        """The verdict next to its own test; a binary metric's bootstrap CI is named descriptive."""
        if self.n == 0:
            return f"{self.metric}: no shared episodes"
        verdict = self.verdict if self.verdict is not None else "no verdict (no better direction declared)"
        head = f"{self.metric}: {self.mean_a:.3f} → {self.mean_b:.3f}, n={self.n}: "
        ci = f"{self.confidence:.0%} CI {self.ci_low:+.3f}…{self.ci_high:+.3f}" if self.ci_low is not None else ""
        if self.binary:
            described = f", descriptive bootstrap {ci}" if self.ci_low is not None else ""
            return (f"{head}{verdict} (McNemar p={self.p_value:.3g}, +{self.gained}/−{self.lost}); "
                    f"Δ {self.delta:+.3f}{described}")
        return f"{head}{verdict} (Δ {self.delta:+.3f}, paired bootstrap {ci})"


def compare(a: Sequence[float], b: Sequence[float], *, metric: str = "success",
            higher_is_better: bool | None = True, confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
            seed: int = 0, describe: bool = True) -> PairedComparison:
    """Compare paired per-episode values (a[i] and b[i] come from the same episode).
    `higher_is_better=None`: the difference and its test without a verdict.
    `describe=False`: skip the descriptive bootstrap CI of a binary metric (its
    verdict does not use it; ci_low/ci_high are then None)."""
    if len(a) != len(b):
        raise ValueError(f"paired values differ in length: {len(a)} vs {len(b)}")
    if not 0.5 <= confidence < 1.0:
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence}")
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    binary = bool(np.all(np.isin(xa, (0.0, 1.0))) and np.all(np.isin(xb, (0.0, 1.0))))
    n = int(xa.size)
    if n == 0:
        return PairedComparison(metric, 0, None, None, None, None, None, binary, None, None, None, confidence,
                                higher_is_better, None if higher_is_better is None else "indistinguishable",
                                "none: no shared episodes")
    diff = xb - xa
    low = high = None
    if describe or not binary:
        low, _, high = bootstrap_mean(diff, confidence=confidence, resamples=resamples, seed=seed)
    delta = float(diff.mean())
    sign = 1.0 if higher_is_better else -1.0
    if binary:
        gained, lost = int(np.sum(diff > 0)), int(np.sum(diff < 0))
        p = mcnemar_p(gained, lost)
        decided = p < 1.0 - confidence
        test = "exact McNemar (two-sided)"
    else:
        gained = lost = None
        p = None
        # a bound that shows as ±0.000 touches 0: no verdict on a difference the printed CI cannot separate from none
        decided = (low > 0 or high < 0) and min(abs(low), abs(high)) >= SHOWN_ZERO
        test = "paired bootstrap CI of the mean difference"
    if higher_is_better is None:
        verdict = None
    elif not decided or delta == 0:
        verdict = "indistinguishable"
    else:
        verdict = "better" if sign * delta > 0 else "worse"
    return PairedComparison(metric, n, float(xa.mean()), float(xb.mean()), delta, low, high, binary,
                            gained, lost, p, confidence, higher_is_better, verdict, test)


def pair_by_episode(a: Iterable[dict], b: Iterable[dict], key: str = "episode_id") -> list[tuple[dict, dict]]:
    """Records of the episodes both sides scored (infrastructure failures left
    out), in B's order. Records without the key pair by position."""
    def ident(i: int, r: dict) -> str:
        return str(r[key]) if key in r else f"#{i}"

    left = {ident(i, r): r for i, r in enumerate(a) if not r.get("infra_error")}
    return [(left[ident(i, r)], r) for i, r in enumerate(b) if not r.get("infra_error") and ident(i, r) in left]

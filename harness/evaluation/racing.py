"""Sequential racing: a child against its parent in batches of shared episodes,
stopping as soon as an anytime-valid test can decide.

The test is a two-sided confidence sequence for the mean paired difference
d = mean(child − parent) of a metric bounded in [0, 1] (success), built by
betting (the hedged-capital construction of Waudby-Smith & Ramdas, "Estimating
means of bounded random variables by betting", JRSS-B 2024): for every
candidate value m of d, a gambler bets on each new pair against "the mean is
m"; m leaves the sequence when the gambler's wealth reaches 1/α. By Ville's
inequality the sequence covers the true d at every episode count at once with
probability ≥ 1 − α, so it may be checked after every batch.

The procedure spends α across its two stages (a union bound): the sequence
runs at level α/2 and the fixed-sample fallback at α/2, so the whole race,
fallback included, keeps its error rates at α.

Decisions (checked after each batch):
- `better` / `worse`: the sequence excludes 0. Error rate: when the two
  candidates are equally good, P(ever deciding better or worse) ≤ α/2.
- `indistinguishable` (equivalent within the margin): the sequence lies inside
  (−margin, +margin). Error rate: when |d| ≥ margin, P(ever deciding so) ≤ α/2.
- when the episodes run out first, the fixed-sample paired test (exact
  McNemar / bootstrap CI) at level α/2 on everything run gives the verdict,
  marked so. With both stages: equal candidates get better/worse with
  probability ≤ α/2 + α/2 = α.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

ALPHA = 0.05
MARGIN = 0.1
BATCH = 10
_GRID = np.linspace(-1.0, 1.0, 801)   # candidate values of d (step 0.0025)
_BET_CAP = 0.75                       # bets stay below this fraction of what the bound allows


@dataclass(frozen=True)
class RaceConfig:
    alpha: float = ALPHA
    margin: float = MARGIN
    batch: int = BATCH
    seed: int = 0            # order in which the shared episodes are raced

    def check(self) -> None:
        if not 0 < self.alpha < 0.5:
            raise ValueError(f"alpha must be in (0, 0.5), got {self.alpha}")
        if not 0 <= self.margin < 1:
            raise ValueError(f"margin must be in [0, 1), got {self.margin}")
        if self.batch < 1:
            raise ValueError(f"batch must be >= 1, got {self.batch}")


class ConfidenceSequence:
    """Betting confidence sequence for the mean of paired differences in [−1, 1]."""

    def __init__(self, alpha: float = ALPHA):
        self.alpha = alpha
        self.mu = (_GRID + 1.0) / 2.0            # the same grid for y = (x + 1) / 2 in [0, 1]
        self.log_up = np.zeros_like(self.mu)     # log wealth betting that the mean is above m
        self.log_down = np.zeros_like(self.mu)   # ... below m
        self.alive = np.ones_like(self.mu, dtype=bool)  # intersection over time
        self.n = 0
        self._sum = 0.5     # running estimates for the predictable bet size
        self._sq = 0.25

    def update(self, diffs) -> None:
        ys = (np.asarray(diffs, dtype=float).ravel() + 1.0) / 2.0
        if ys.size == 0:
            return
        lams = np.empty(ys.size)
        for i, y in enumerate(ys):   # the predictable bet sizes: each from the pairs before it
            t = self.n + 1
            mean, var = self._sum / t, self._sq / t
            lams[i] = min(math.sqrt(2.0 * math.log(2.0 / self.alpha) / (var * t * math.log(t + 1.0))), 1e6)
            self._sum += y
            self._sq += (y - mean) ** 2
            self.n = t
        step = ys[:, None] - self.mu[None, :]
        up = np.minimum(lams[:, None], _BET_CAP / np.maximum(self.mu, 1e-12))
        down = np.minimum(lams[:, None], _BET_CAP / np.maximum(1.0 - self.mu, 1e-12))
        log_up = self.log_up + np.cumsum(np.log1p(up * step), axis=0)
        log_down = self.log_down + np.cumsum(np.log1p(-down * step), axis=0)
        # hedged: half the capital on each side; a value leaves once its wealth reaches 1/alpha
        wealth = np.logaddexp(log_up, log_down) - math.log(2.0)
        self.alive &= np.all(wealth < math.log(1.0 / self.alpha), axis=0)
        self.log_up, self.log_down = log_up[-1], log_down[-1]

    def interval(self) -> tuple[float, float]:
        inside = _GRID[self.alive]
        if inside.size == 0:  # numerically empty: the last point estimate
            d = 2.0 * self._sum / (self.n + 1) - 1.0
            return d, d
        return float(inside.min()), float(inside.max())


def decide(low: float, high: float, margin: float) -> str | None:
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    if -margin < low and high < margin:
        return "indistinguishable"
    return None


@dataclass
class Race:
    """The state of one race; feed it batches of paired values."""

    config: RaceConfig = field(default_factory=RaceConfig)
    cs: ConfidenceSequence = field(init=False)
    parent: list = field(default_factory=list)
    child: list = field(default_factory=list)
    verdict: str | None = None
    decided_by: str | None = None

    def __post_init__(self):
        self.config.check()
        self.cs = ConfidenceSequence(self.config.alpha / 2)

    def add(self, parent_values, child_values) -> str | None:
        """Add one batch; returns the verdict once the sequential test decides."""
        diffs = np.asarray(child_values, dtype=float) - np.asarray(parent_values, dtype=float)
        self.parent += list(parent_values)
        self.child += list(child_values)
        self.cs.update(diffs)
        if self.verdict is None:
            verdict = decide(*self.cs.interval(), self.config.margin)
            if verdict is not None:
                self.verdict, self.decided_by = verdict, "sequential"
        return self.verdict

    def finish(self) -> str:
        """Out of episodes: the fixed-sample paired test decides."""
        if self.verdict is None:
            from harness.evaluation.paired import compare

            self.verdict = compare(self.parent, self.child, confidence=1 - self.config.alpha / 2,
                                   describe=False).verdict
            self.decided_by = "fixed-sample test (the sequential test did not decide)"
        return self.verdict

    def to_dict(self) -> dict:
        low, high = self.cs.interval()
        return {"verdict": self.verdict, "decided_by": self.decided_by, "episodes": self.cs.n,
                "delta": float(np.mean(np.subtract(self.child, self.parent))) if self.child else None,
                "confidence_sequence": [low, high], **asdict(self.config),
                "error_rates": error_rates(self.config)}


def error_rates(config: RaceConfig) -> str:
    half = config.alpha / 2
    return (f"equal candidates: P(better or worse) ≤ {config.alpha:g} for the whole race "
            f"({half:g} sequential, anytime-valid, + {half:g} fixed-sample fallback); "
            f"|Δ| ≥ {config.margin:g}: P(indistinguishable) ≤ {half:g}")


def race_order(episode_ids: list[str], seed: int) -> list[str]:
    """A fixed shuffled order of the shared episodes (tiers list episodes level by level)."""
    order = list(episode_ids)
    np.random.default_rng(seed).shuffle(order)
    return order

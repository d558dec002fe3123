"""ADAS fitness speed: the vectorised, chunked 100,000-resample bootstrap
against a plain per-resample loop (timed on 2,000 resamples, scaled), plus
AFlow's parent draw. Prints figures; asserts nothing.

    python bench/bench_variants_bootstrap.py
"""

from __future__ import annotations

import time

import numpy as np

from harness.variants.aflow.rules import select_parent
from harness.variants.fitness import BOOTSTRAP_RESAMPLES, bootstrap_ci


def best_of(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def naive(scores: np.ndarray, resamples: int) -> None:
    rng = np.random.default_rng(0)
    means = [float(np.mean(rng.choice(scores, size=scores.size))) for _ in range(resamples)]
    np.percentile(means, [2.5, 50, 97.5])


def rows(full: bool) -> list[dict]:
    """Rows for bench/run_all.py: the 100,000-resample bootstrap on 100 episodes."""
    rng = np.random.default_rng(100)
    scores = (rng.random(100) < 0.4).astype(float)
    fast = best_of(lambda: bootstrap_ci(scores))
    return [{"metric": "ADAS bootstrap CI, 100,000 resamples, 100 episodes (0/1 scores)", "value": fast, "unit": "s",
             "target": None}]


def main() -> None:
    print(f"{'scores':>10} {'episodes':>8}  {'vectorised 100k (s)':>20}  {'per-resample loop 100k (s, est.)':>33}  {'speed-up':>8}")
    for kind in ("success", "continuous"):
        for n in (20, 100, 500):
            rng = np.random.default_rng(n)
            scores = (rng.random(n) < 0.4).astype(float) if kind == "success" else rng.gamma(2.0, 1.0, n)
            fast = best_of(lambda: bootstrap_ci(scores))
            slow = best_of(lambda: naive(scores, 2_000), repeats=1) * BOOTSTRAP_RESAMPLES / 2_000
            print(f"{kind:>10} {n:>8}  {fast:>20.3f}  {slow:>33.2f}  {slow / fast:>7.0f}x")
    scores = {0: 30.0, 1: 42.0, 2: 38.0, 3: 45.0, 4: 10.0}
    per_draw = best_of(lambda: [select_parent(scores, seed=1, iteration=i) for i in range(1_000)]) / 1_000
    print(f"aflow select_parent: {per_draw * 1e6:.0f} µs per draw")


if __name__ == "__main__":
    main()

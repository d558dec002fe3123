"""Harness overhead per iteration outside evaluation: open (lock + recover),
stage, check, commit — on a real BabyAI run directory. Target: < 0.5 s.

    python bench/bench_rundir.py [--iterations 10]

Evaluation (smoke + performance tier) is timed too, but reported apart: it is
the simulator's cost, not the harness's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 0.5


def measure(iterations: int) -> dict[str, list[float]]:
    """Seconds per committed iteration, per step (open, stage, propose, check, evaluate, commit)."""
    from harness.rundir.check import run_check
    from harness.rundir.commit import commit, discard
    from harness.rundir.create import init_run
    from harness.rundir.run import open_run
    from harness.rundir.stage import stage
    from harness.variants.random_proposer.proposer import propose_into

    with tempfile.TemporaryDirectory(prefix="bench-rundir-") as tmp:
        os.environ["ARCHITECT_CACHE_DIR"] = str(Path(tmp) / "cache")
        paths = init_run("random", "babyai", runs_dir=Path(tmp), run_id="bench", max_iterations=iterations,
                         smoke_episodes=1, eval_episodes=1, seed=0)
        timings: dict[str, list[float]] = {k: [] for k in ("open", "stage", "propose", "check", "evaluate", "commit")}
        committed = 0
        attempt = 1
        while committed < iterations:
            t0 = time.perf_counter()
            with open_run(paths.root) as run:
                t1 = time.perf_counter()
                staging = stage(run)
                t2 = time.perf_counter()
                propose_into(staging, 0, attempt, run.graph_hashes())
                attempt += 1
                t3 = time.perf_counter()
                if run_check(run, staging)["violations"]:
                    continue
                t4 = time.perf_counter()
                smoke = run.evaluate_staging(staging, "smoke")
                evaluation = run.evaluate_staging(staging, "eval") if smoke["passed"] else None
                t5 = time.perf_counter()
                if evaluation is None or not evaluation["passed"]:
                    discard(run, staging, "bench: failed evaluation")
                    continue
                commit(run, staging, "bench iteration")
                t6 = time.perf_counter()
            committed += 1
            for key, value in zip(timings, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5)):
                timings[key].append(value)
    return timings


def _harness_overhead(timings: dict[str, list[float]]) -> list[float]:
    return [sum(timings[k][i] for k in ("open", "stage", "check", "commit")) for i in range(len(timings["open"]))]


def rows(full: bool) -> list[dict]:
    """Rows for bench/run_all.py (reduced: 3 iterations)."""
    timings = measure(10 if full else 3)
    overhead = _harness_overhead(timings)
    return [{"metric": f"run directory: open+stage+check+commit per iteration (median of {len(overhead)})",
             "value": statistics.median(overhead) * 1e3, "unit": "ms", "target": TARGET_SECONDS * 1e3,
             "note": "evaluation (the simulator) excluded"}]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10)
    args = parser.parse_args()
    timings = measure(args.iterations)
    committed = len(timings["open"])
    print(f"run-directory overhead per committed iteration ({committed} iterations, median / max, ms)")
    for key, values in timings.items():
        note = "  (simulator, not harness)" if key == "evaluate" else ""
        print(f"  {key:<9} {statistics.median(values) * 1e3:8.1f} {max(values) * 1e3:8.1f}{note}")
    overhead = _harness_overhead(timings)
    median = statistics.median(overhead)
    print(f"  {'harness':<9} {median * 1e3:8.1f} {max(overhead) * 1e3:8.1f}   open+stage+check+commit;"
          f" target < {TARGET_SECONDS * 1e3:.0f} ms: {'met' if median < TARGET_SECONDS else 'NOT met'}")


if __name__ == "__main__":
    main()

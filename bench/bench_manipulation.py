"""Manipulation executor figures (robosuite on MuJoCo), printed (no assertions).

    python bench/bench_manipulation.py [--steps 200] [--episodes 8] [--skip-cold]

Prints:
- first start: import robosuite + build the first environment + first step, in a
  fresh process, with numba's on-disk cache cold (an empty NUMBA_CACHE_DIR) and warm;
- simulator steps/s without rendering (Lift, one process, after warm-up);
- the voxposer-scripted seed: episodes/s and SR on its smoke tier in one process;
- evaluate() with 1 and 2 worker processes on the first N search episodes
  (no result cache), episodes/s and the speed-up (goal: >= 1.7x on 2 cores).
The machine's load average is printed with the figures: other jobs skew them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "executors" / "manipulation" / "seeds" / "voxposer-scripted"
FIRST_START = """
import time, numpy as np
t = time.perf_counter()
from executors.manipulation import envs
env = envs.make_env("Lift")
envs.reset_env(env, 0)
env.step(np.zeros(7))
print(time.perf_counter() - t)
"""


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def first_start(cold: bool) -> float:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        if cold:
            env["NUMBA_CACHE_DIR"] = cache
        out = subprocess.run([sys.executable, "-c", FIRST_START], env=env, cwd=ROOT, capture_output=True,
                             text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def steps_per_second(steps: int) -> float:
    import numpy as np

    from executors.manipulation import envs

    env = envs.make_env("Lift")
    envs.reset_env(env, 0)
    rng = np.random.default_rng(0)
    env.step(np.zeros(7))
    start = time.perf_counter()
    for _ in range(steps):
        env.step(rng.uniform(-0.3, 0.3, 7))
    return steps / (time.perf_counter() - start)


def scripted_smoke() -> tuple[int, float, float]:
    from executors import load_executor
    from harness.canvas.runtime import GraphRunner

    episodes = load_executor("manipulation").episodes("smoke")
    with GraphRunner(json.loads((SEED / "graph.json").read_text()), candidate_dir=SEED) as runner:
        runner.run_episode({**episodes[0], "max_steps": 1})  # build the env outside the timing
        start = time.perf_counter()
        results = [runner.run_episode(e) for e in episodes]
        elapsed = time.perf_counter() - start
    return len(results), elapsed, sum(r["success"] for r in results) / len(results)


def pooled(workers: int, episodes: int) -> tuple[float, float]:
    from harness.evaluation import evaluate

    start = time.perf_counter()
    metrics = evaluate(SEED, "search", episodes=episodes, workers=workers, use_cache=False, progress=False)
    return time.perf_counter() - start, metrics["primary"]["mean"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--episodes", type=int, default=8, help="search episodes for the 1-vs-2-worker figure")
    parser.add_argument("--skip-cold", action="store_true", help="skip the cold-numba first start")
    args = parser.parse_args()

    print(f"machine: {os.cpu_count()} cores, {load()}")
    if not args.skip_cold:
        print(f"first start, numba cache cold: {first_start(True):.1f} s   ({load()})")
    print(f"first start, numba cache warm: {first_start(False):.1f} s   ({load()})")
    print(f"simulator, no rendering: {steps_per_second(args.steps):.1f} steps/s over {args.steps} steps   ({load()})")
    n, seconds, sr = scripted_smoke()
    print(f"voxposer-scripted smoke, 1 process: {n} episodes in {seconds:.1f} s = {n / seconds:.3f} episodes/s, "
          f"SR {sr:.2f}   ({load()})")
    one, sr1 = pooled(1, args.episodes)
    two, sr2 = pooled(2, args.episodes)
    print(f"evaluate {args.episodes} search episodes: 1 worker {one:.1f} s ({args.episodes / one:.3f} ep/s, SR {sr1:.2f}); "
          f"2 workers {two:.1f} s ({args.episodes / two:.3f} ep/s, SR {sr2:.2f}); speed-up {one / two:.2f}x "
          f"(goal >= 1.7x)   ({load()})")


if __name__ == "__main__":
    main()

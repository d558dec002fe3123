"""Manipulation executor figures (robosuite on MuJoCo), printed (no assertions).

    python bench/bench_manipulation.py [--steps 200] [--episodes 8] [--skip-cold]

Prints:
- first start: import robosuite + build the first environment + first step, in a
  fresh process, with numba's on-disk cache cold (an empty NUMBA_CACHE_DIR) and warm;
- simulator steps/s without rendering (Lift, one process, after warm-up);
- the voxposer-scripted seed: episodes/s and SR on its smoke tier in one process;
- the evaluation's forkserver start (it imports robosuite once, from the
  executor's worker_preload; the first evaluation of a process pays it);
- evaluate() with 1 and 2 worker processes on the first N search episodes
  (no result cache), both forking from the already started forkserver,
  episodes/s, the speed-up next to the best one the episodes' lengths allow
  (total / max(longest episode, total / 2), from the 1-worker run), and the
  2-worker run's makespan against its lower bound max(longest episode,
  total / 2) (goal: within 1.1x; the speed-up has no target of its own: 8
  uneven episodes bound it below 2x). The 1-worker run records the episodes'
  durations the 2-worker run schedules by (longest expected first); the
  episodes differ in length (Door, PickPlaceCan, ...).
The machine's load average is printed with the figures: other jobs skew them.
`rows(full)` gives the same figures to bench/run_all.py (reduced: no cold
first start, 6 search episodes).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's harness, not an installed one
sys.path.insert(0, str(ROOT / "bench"))

from forkserver_start import start_forkserver  # noqa: E402  (after the path set-up)

SEED = ROOT / "seeds" / "voxposer-scripted"
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


def missing() -> str | None:
    """What to install when robosuite or mujoco is absent, else None."""
    if all(importlib.util.find_spec(m) for m in ("robosuite", "mujoco")):
        return None
    return "robosuite or mujoco not installed: pip install -e '.[manipulation]'"


def steps_per_second(steps: int) -> tuple[float, float]:
    """(simulator steps per wall second, per CPU second of this process)."""
    import numpy as np

    from executors.manipulation import envs

    env = envs.make_env("Lift")
    envs.reset_env(env, 0)
    rng = np.random.default_rng(0)
    env.step(np.zeros(7))
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        env.step(rng.uniform(-0.3, 0.3, 7))
    return steps / (time.perf_counter() - start), steps / (time.process_time() - cpu)


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


def pooled(workers: int, episodes: int) -> dict:
    """evaluate() on the first search episodes: wall s, SR, the sum of the episodes'
    own wall seconds, and the per-episode (id, success, steps, reward): the float reward
    shows a difference in the scene or the trajectory that leaves the step count alone."""
    from harness.evaluation import evaluate

    start = time.perf_counter()
    metrics = evaluate(SEED, "search", episodes=episodes, workers=workers, use_cache=False, progress=False)
    return {"wall": time.perf_counter() - start, "sr": metrics["primary"]["mean"], "schedule": metrics["schedule"],
            "episode_sum": sum(r["wall_seconds"] for r in metrics["episodes"]),
            "episodes": [(r["episode_id"], r["success"], r["steps"], r["reward"]) for r in metrics["episodes"]]}


def best_speedup(schedule: dict, workers: int) -> float:
    """The speed-up over one worker that the best order on WORKERS could reach, from a
    1-worker run's `schedule`: its episodes' total over max(longest, total / workers)."""
    total, longest = schedule["episode_seconds_total"], schedule["longest_episode_seconds"]
    return total / max(longest, total / workers)


def rows(full: bool) -> list[dict]:
    """Rows for bench/run_all.py. full: the sizes above (cold and warm first start,
    200 steps, 8 search episodes); reduced: no cold first start, 200 steps, 6 episodes."""
    steps, episodes = 200, 8 if full else 6
    why = missing()
    if why:
        return [{"metric": m, "value": None, "note": why} for m in (
            "first start (import robosuite, first env, first step), numba cache warm",
            f"simulator steps/s, Lift, no rendering, {steps} steps",
            f"evaluate {episodes} search episodes: speed-up 2 vs 1 workers")]
    out = []
    if full:
        out.append({"metric": "first start (import robosuite, first env, first step), numba cache cold",
                    "value": first_start(True), "unit": "s", "target": None,
                    "note": f"fresh process, empty NUMBA_CACHE_DIR; {load()}"})
    out.append({"metric": "first start (import robosuite, first env, first step), numba cache warm",
                "value": first_start(False), "unit": "s", "target": None,
                "note": f"fresh process; {load()}" + ("" if full else "; the cold-numba first start (an empty "
                                                       "NUMBA_CACHE_DIR, ~80 s) is skipped at reduced size: --full")})
    rate, cpu_rate = steps_per_second(steps)
    out.append({"metric": f"simulator steps/s, Lift, no rendering, {steps} steps", "value": rate, "unit": "steps/s",
                "target": None, "better": "higher", "note": f"{cpu_rate:.1f} steps per CPU second; {load()}"})
    n, seconds, sr = scripted_smoke()
    out.append({"metric": f"voxposer-scripted smoke tier, {n} episodes, 1 process", "value": n / seconds,
                "unit": "ep/s", "target": None, "better": "higher", "note": f"SR {sr:.2f}; {load()}"})
    fork_s = start_forkserver('manipulation')
    out.append({"metric": "evaluation forkserver start (robosuite preloaded)", "value": fork_s, "unit": "s",
                "target": None, "note": "paid once per process by its first evaluation (workers fork from it); "
                                        f"started before the 1- and 2-worker runs below; {load()}"})
    with tempfile.TemporaryDirectory() as cache:
        os.environ["ARCHITECT_CACHE_DIR"] = cache  # the durations the 2-worker run schedules by: the 1-worker run's
        one = pooled(1, episodes)
        load1 = load()
        two = pooled(2, episodes)
    for w, r, at in ((1, one, load1), (2, two, load())):
        out.append({"metric": f"evaluate {episodes} search episodes, {w} worker{'s' if w > 1 else ''}",
                    "value": r["wall"], "unit": "s", "target": None,
                    "note": f"{episodes / r['wall']:.3f} ep/s, SR {r['sr']:.2f}, episodes' own seconds summed "
                            f"{r['episode_sum']:.1f}; {at}"})
    best = best_speedup(one["schedule"], 2)
    out.append({"metric": f"speed-up 2 vs 1 workers, {episodes} search episodes", "value": one["wall"] / two["wall"],
                "unit": "x", "target": None, "better": "higher",
                "note": f"the most the episodes' lengths allow: {best:.2f}x (next row); cache off, both forking from "
                        "the started forkserver; each worker builds its own env in its first episode; identical "
                        f"per-episode results: {one['episodes'] == two['episodes']}; episodes' seconds summed grow "
                        f"with 2 workers when the cores are not free (load); {load()}"})
    out.append({"metric": f"best speed-up the longest episode allows, {episodes} search episodes, 2 workers",
                "value": best, "unit": "x", "target": None, "better": "higher",
                "note": "the 1-worker run's episode seconds summed / max(longest, summed / 2): no order of these "
                        "episodes on 2 workers does better; the makespan row below is the verdict"})
    sched = two["schedule"]
    out.append({"metric": f"makespan / its lower bound, {episodes} search episodes, 2 workers",
                "value": sched["makespan_over_bound"], "unit": "x", "target": 1.1,
                "note": f"{sched['order'].replace('_', ' ')}; makespan {sched['makespan_seconds']:.2f} s (first "
                        f"episode's start to last one's end), bound {sched['lower_bound_seconds']:.2f} s = max(longest "
                        f"{sched['longest_episode_seconds']:.2f} s, total {sched['episode_seconds_total']:.2f} s / 2); "
                        f"{load()}"})
    return out


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
    rate, cpu_rate = steps_per_second(args.steps)
    print(f"simulator, no rendering: {rate:.1f} steps/s over {args.steps} steps ({cpu_rate:.1f} per CPU second)"
          f"   ({load()})")
    n, seconds, sr = scripted_smoke()
    print(f"voxposer-scripted smoke, 1 process: {n} episodes in {seconds:.1f} s = {n / seconds:.3f} episodes/s, "
          f"SR {sr:.2f}   ({load()})")
    print(f"evaluation forkserver start (robosuite preloaded; the first evaluation of a process pays it): "
          f"{start_forkserver('manipulation'):.1f} s   ({load()})")
    one = pooled(1, args.episodes)
    two = pooled(2, args.episodes)
    n = args.episodes
    print(f"evaluate {n} search episodes: 1 worker {one['wall']:.1f} s ({n / one['wall']:.3f} ep/s, SR {one['sr']:.2f}, "
          f"episodes' seconds summed {one['episode_sum']:.1f}); 2 workers {two['wall']:.1f} s "
          f"({n / two['wall']:.3f} ep/s, SR {two['sr']:.2f}, episodes' seconds summed {two['episode_sum']:.1f}); "
          f"speed-up {one['wall'] / two['wall']:.2f}x (the episodes' lengths allow at most "
          f"{best_speedup(one['schedule'], 2):.2f}x); makespan {two['schedule']['makespan_over_bound']:.2f}x its "
          f"lower bound (goal <= 1.1x); identical per-episode results: "
          f"{one['episodes'] == two['episodes']}   ({load()})")


if __name__ == "__main__":
    main()

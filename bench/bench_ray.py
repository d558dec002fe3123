"""Ray backend against the local pool, and Ray's scaling on latency-bound episodes.

    python bench/bench_ray.py [--episodes 100] [--latency-episodes 64] [--calls 5] [--latency 0.1]

1. The BabyAI search tier (first N episodes, default all 100) of seeds/babyai,
   cache off, per-episode logs on, 2 workers: the local pool (its forkserver
   started beforehand and timed on its own: the first evaluation of a process
   pays it), then Ray with 2 actors started for the call ("cold") and again
   with the same actors reused ("warm"). Prints wall times and Ray's overhead
   per episode against the local pool.
2. A synthetic latency-bound executor (bench/latency_runner.py: every episode
   waits on CALLS simulated model calls of LATENCY seconds) on 1, 4 and 16 Ray
   actors (0.1 CPU each), all actors started and loaded before the clock starts. Prints the
   wall time next to the ideal ceil(episodes / actors) x episode time, the
   speed-up over 1 actor and its ratio to linear (goal: 16 actors >= 0.8).
Figures are printed side by side; nothing is asserted. `rows(full)` gives the
same figures to bench/run_all.py (reduced: 30 BabyAI episodes, 32 latency-bound
episodes).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from forkserver_start import start_forkserver  # noqa: E402  (after the path set-up)

SEED = ROOT / "seeds" / "babyai"
GOAL = 0.8


def bench_babyai(n_episodes: int | None) -> list[tuple[str, float, int, float | None]]:
    from harness.evaluation import evaluate

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, backend in (("local pool, 2 workers", "local"), ("ray, 2 actors (cold)", "ray"),
                              ("ray, 2 actors (warm)", "ray")):
            t0 = time.perf_counter()
            m = evaluate(SEED, "search", episodes=n_episodes, workers=2, out_dir=Path(tmp) / name.replace(" ", "_"),
                         use_cache=False, progress=False, backend=backend)
            rows.append((name, time.perf_counter() - t0, m["n"], m["primary"]["mean"],
                         [(r["episode_id"], r["success"], r["steps"]) for r in m["episodes"]]))
    return rows


def bench_scaling(n_episodes: int, calls: int, latency: float) -> list[tuple[int, float, float]]:
    from harness.evaluation.pool import PoolConfig
    from harness.evaluation.ray_pool import RayOptions, run_ray_pool

    factory, args, options = "latency_runner:LatencyRunner", {"calls": calls, "latency": latency}, RayOptions(num_cpus=0.1)
    tasks = [{"index": i, "episode": {"episode_id": f"e{i}", "seed": i}, "log_path": None} for i in range(n_episodes)]
    out = []
    for actors in (1, 4, 16):
        config = PoolConfig(workers=actors, threads=1, in_flight=actors, task_timeout=60)
        while True:  # start the actors (kept for reuse) until every one of them has run an episode
            warm = run_ray_pool(tasks[:actors], factory, args, config, options)
            if len({o.record["metrics"]["pid"] for o in warm.values() if o.record}) == actors:
                break
        t0 = time.perf_counter()
        outcomes = run_ray_pool(tasks, factory, args, config, options)
        wall = time.perf_counter() - t0
        failed = sum(1 for o in outcomes.values() if o.record is None)
        out.append((actors, wall, math.ceil(n_episodes / actors) * calls * latency, failed))
    return out


def start_ray() -> float:
    """A local Ray instance for this process (the actors import from this checkout and
    bench/), with a fresh result-cache folder; returns the seconds it took."""
    import ray

    os.environ.setdefault("ARCHITECT_CACHE_DIR", tempfile.mkdtemp(prefix="bench-ray-cache-"))
    t0 = time.perf_counter()
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([str(BENCH), str(ROOT)])}})
    return time.perf_counter() - t0


def rows(full: bool) -> list[dict]:
    """Rows for bench/run_all.py. full: all 100 BabyAI search episodes, 64 latency-bound
    episodes; reduced: 30 and 32. 5 simulated calls of 0.1 s per latency-bound episode."""
    n_babyai, n_latency, calls, latency = (None, 64, 5, 0.1) if full else (30, 32, 5, 0.1)
    if importlib.util.find_spec("ray") is None:
        why = 'Ray not installed: pip install -e ".[ray]"'
        return [{"metric": m, "value": None, "note": why} for m in (
            "ray vs local pool, BabyAI search tier: overhead per episode",
            f"ray scaling, {n_latency} latency-bound episodes: 16 actors, fraction of linear speed-up")]
    import ray

    out = [{"metric": "ray local instance start", "value": start_ray(), "unit": "s", "target": None,
            "note": f"ray {ray.__version__}, {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}"}]
    try:
        fork_s = start_forkserver('babyai')
        b = bench_babyai(n_babyai)
        local_wall, n = b[0][1], b[0][2]
        for name, wall, _, sr, _ in b:
            out.append({"metric": f"BabyAI search tier, {n} episodes, {name}: wall", "value": wall, "unit": "s",
                        "target": None,
                        "note": f"SR {sr:.3f}, cache off, logs on" + (f"; forking from its forkserver, started "
                                f"before in {fork_s:.2f} s (the first evaluation of a process pays that)"
                                if name.startswith("local") else
                                "; actors started for this call" if "cold" in name else "; the same actors reused")})
        warm = b[2][1]
        out.append({"metric": f"ray (warm actors) overhead per episode vs local pool, {n} BabyAI episodes",
                    "value": 1000 * (warm - local_wall) / n, "unit": "ms", "target": None,
                    "note": f"cold actors: {1000 * (b[1][1] - local_wall) / n:+.1f} ms; load {os.getloadavg()[0]:.2f}"})
        out.append({"metric": f"per-episode results identical across backends, {n} BabyAI episodes",
                    "value": all(r[4] == b[0][4] for r in b[1:]), "target": True})
        scaling = bench_scaling(n_latency, calls, latency)
        base = scaling[0][1]
        for actors, wall, ideal, failed in scaling:
            row = {"metric": f"ray scaling, {n_latency} latency-bound episodes ({calls} x {latency:.1f} s), "
                             f"{actors} actor{'s' if actors > 1 else ''}: fraction of linear speed-up",
                   "value": base / wall / actors, "unit": "", "target": None, "better": "higher",
                   "note": f"wall {wall:.2f} s, ideal {ideal:.2f} s, infra failures {failed}; warm actors; "
                           f"load {os.getloadavg()[0]:.2f}"}
            if actors == 16:
                row["target"] = GOAL
                if not full:
                    row["note"] += (f"; {n_latency} episodes = {math.ceil(n_latency / actors)} per actor (64 at "
                                    "full size): dispatch overhead weighs more, the ratio is noisier")
            if actors > 1:
                out.append(row)
            else:
                out.append({**row, "metric": f"ray scaling, {n_latency} latency-bound episodes ({calls} x "
                                             f"{latency:.1f} s), 1 actor: wall", "value": wall, "unit": "s",
                            "better": "lower"})
    finally:
        ray.shutdown()
    return out


def print_babyai(rows) -> None:
    local_wall, n = rows[0][1], rows[0][2]
    print(f"\n1. BabyAI search tier, {n} episodes (cache off, logs on)")
    print(f"{'backend':<26}{'wall s':>9}{'s/episode':>11}{'overhead/episode vs local':>28}{'success':>9}")
    for name, wall, n_eps, sr, _ in rows:
        over = "" if name.startswith("local") else f"{1000 * (wall - local_wall) / n_eps:+.1f} ms"
        print(f"{name:<26}{wall:>9.2f}{wall / n_eps:>11.3f}{over:>28}{sr:>9.3f}")
    same = all(r[4] == rows[0][4] for r in rows[1:])
    print(f"per-episode results identical across backends: {'yes' if same else 'NO'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=None, help="BabyAI search-tier episodes (default all 100)")
    parser.add_argument("--latency-episodes", type=int, default=64)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--skip-babyai", action="store_true", help="only the scaling part")
    args = parser.parse_args()

    import ray

    print(f"ray {ray.__version__}: local instance started in {start_ray():.1f} s "
          f"({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})")

    if not args.skip_babyai:
        print(f"local pool's forkserver started in {start_forkserver('babyai'):.2f} s (before the local-pool run)")
        print_babyai(bench_babyai(args.episodes))

    episode_s = args.calls * args.latency
    print(f"\n2. latency-bound executor: {args.latency_episodes} episodes x {args.calls} simulated model calls "
          f"of {args.latency:.2f} s ({episode_s:.2f} s per episode), warm actors")
    print(f"{'actors':>6}{'wall s':>9}{'ideal s':>9}{'ideal/wall':>12}{'speed-up':>10}{'of linear':>11}"
          f"{'infra failures':>16}")
    scaling = bench_scaling(args.latency_episodes, args.calls, args.latency)
    base = scaling[0][1]
    for actors, wall, ideal, failed in scaling:
        speedup = base / wall
        print(f"{actors:>6}{wall:>9.2f}{ideal:>9.2f}{ideal / wall:>12.2f}{speedup:>10.2f}{speedup / actors:>11.2f}"
              f"{failed:>16}")
    actors, wall, _, _ = scaling[-1]
    ratio = base / wall / actors
    print(f"16 actors: {ratio:.2f} of linear (goal >= {GOAL}): {'met' if ratio >= GOAL else 'NOT met'}")
    ray.shutdown()


if __name__ == "__main__":
    main()

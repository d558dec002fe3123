"""MapGPT executor benchmark: prints its figures (needs the R2R data:
`architect data fetch r2r`).

- graph backend: MatterSim steps per second (goal >= 1,000)
- all 2,349 val_unseen shortest-path teacher replays: wall time (goal < 20 s),
  and how many equal the real simulator's trajectories that the data holds
- the heuristic seed on the 100 search episodes with 2 workers (goal < 60 s)
- loading one scan's graph + captions (goal < 200 ms)
- only the scans an episode set needs are loaded

    python bench/bench_mapgpt.py
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import time

import numpy as np

from executors import load_executor
from executors.mapgpt import data as D
from executors.mapgpt.sim import new_simulator
from executors.mapgpt.teacher import replay
from harness import PROJECT_ROOT


def load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def steps_per_second(ds: D.Dataset, steps: int = 20_000) -> float:
    rng = np.random.default_rng(0)
    items = list(ds.split("val_unseen").values())
    sim = new_simulator(ds.connectivity, backend="graph")
    item = items[0]
    sim.newEpisode([item["scan"]], [item["path"][0]], [item["heading"]], [0.0])
    start = time.perf_counter()
    for n in range(steps):
        if n % 200 == 0:
            item = items[int(rng.integers(len(items)))]
            sim.newEpisode([item["scan"]], [item["path"][0]], [item["heading"]], [0.0])
        state = sim.getState()[0]
        moves = len(state.navigableLocations) - 1
        if moves and rng.random() < 0.3:
            sim.makeAction([int(rng.integers(1, moves + 1))], [0], [0])
        else:
            sim.makeAction([0], [float(rng.choice([-1, 1]))], [float(rng.choice([-1, 0, 1]))])
    return steps / (time.perf_counter() - start)


def replay_all(ds: D.Dataset) -> tuple[float, int, int, int]:
    items = ds.split("val_unseen")
    real = {r["instr_id"]: [list(s) for s in r["trajectory"]] for r in ds.shortest_trajectories()}
    sim = new_simulator(ds.connectivity, backend="graph")
    start = time.perf_counter()
    trajectories = {i: replay(sim, ds.graph(it["scan"]), it["scan"], it["path"], it["heading"])
                    for i, it in items.items()}
    wall = time.perf_counter() - start
    same = sum(trajectories[i] == t for i, t in real.items())
    return wall, len(trajectories), same, len(real)


def heuristic_search(workers: int = 2) -> dict:
    from harness.evaluation import evaluate

    seed = PROJECT_ROOT / "executors" / "mapgpt" / "seeds" / "mapgpt-heuristic"
    return evaluate(seed, "search", workers=workers, use_cache=False, progress=False)


def scan_load_ms(root) -> list[float]:
    times = []
    for scan in ("zsNo4HB9uLZ", "x8F5xyUWy9e", "QUCTc6BB5sX", "TbHJrupSAjP", "2azQ1b91cZZ"):
        fresh = D.Dataset(root)
        start = time.perf_counter()
        fresh.graph(scan)
        fresh.captions(scan)
        times.append(1000 * (time.perf_counter() - start))
    return times


def loaded_scans(root) -> tuple[int, int, int]:
    """Run the smoke tier's episodes in this process; count the scans loaded."""
    import json

    from harness.canvas.runtime import GraphRunner

    ds = D.dataset(root)
    before = set(ds._graphs)
    seed = PROJECT_ROOT / "executors" / "mapgpt" / "seeds" / "mapgpt-heuristic"
    runner = GraphRunner(json.loads((seed / "graph.json").read_text()), candidate_dir=seed)
    episodes = load_executor("mapgpt").episodes("smoke")
    for episode in episodes:
        runner.run_episode(episode)
    needed = {ds.episode(e["split"], e["instr_id"])["scan"] for e in episodes}
    return len(set(ds._graphs) - before), len(needed), D.manifest()["scans"]


def main() -> int:
    root = D.r2r_dir()
    if D.missing(root):
        print(f"the R2R data is not complete in {root}: {D.FETCH_HINT}", file=sys.stderr)
        return 2
    ds = D.Dataset(root)
    print(f"load average before: {load_average()} ({os.cpu_count()} cores)")
    print(f"graph backend: {steps_per_second(ds):,.0f} MatterSim steps/s (goal >= 1,000)")
    wall, n, same, real = replay_all(ds)
    print(f"shortest-path teacher: {n} val_unseen replays in {wall:.2f} s (goal < 20 s); "
          f"{same}/{real} equal the real simulator's trajectories")
    metrics = heuristic_search()
    print(f"heuristic seed, search tier: {metrics['n']} episodes with {metrics['workers']} workers in "
          f"{metrics['wall_seconds']:.1f} s (goal < 60 s); SR {100 * metrics['primary']['mean']:.1f} %, "
          f"SPL {100 * metrics['secondary']['spl']:.1f} %, nDTW {100 * metrics['secondary']['ndtw']:.1f} %")
    times = scan_load_ms(root)
    print(f"one scan (graph + captions): median {statistics.median(times):.0f} ms, max {max(times):.0f} ms "
          f"over {len(times)} large scans (goal < 200 ms)")
    loaded, needed, total = loaded_scans(root)
    print(f"smoke tier in one process: {loaded} scans loaded for {needed} needed (of {total})")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of this process: {peak:.0f} MB (the 11 val_unseen scans' graphs and the smoke scans loaded)")
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

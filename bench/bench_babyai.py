"""BabyAI executor figures, printed side by side (no assertions).

    python bench/bench_babyai.py [--tiers smoke,search] [--graph seeds/babyai/graph.json]

Prints, per tier: the seed graph's success rate, mean steps / reward / path
efficiency, wall time and time per 100 episodes (one process, one core); the
same for the seed with two alternatives swapped in (FullMap memory, frontier
exploration: the headroom a search can find); and the BabyAI bot's (oracle)
figures on the same episodes.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path

from executors import load_executor
from harness.canvas.runtime import GraphRunner
from harness.executor_api import seed_graph_path

ROOT = Path(__file__).resolve().parent.parent


def summarise(results: list[dict], seconds: float) -> dict:
    n = len(results)
    return {
        "episodes": n,
        "success_rate": sum(bool(r["success"]) for r in results) / n,
        "steps": sum(r["steps"] for r in results) / n,
        "reward": sum(r["reward"] for r in results) / n,
        "path_efficiency": sum(r["metrics"].get("path_efficiency", 0.0) for r in results) / n,
        "seconds": seconds,
        "seconds_per_100": seconds / n * 100,
    }


def run_graph(graph: dict, episodes: list[dict]) -> tuple[list[dict], float]:
    runner = GraphRunner(graph)
    start = time.perf_counter()
    results = [runner.run_episode(e) for e in episodes]
    elapsed = time.perf_counter() - start
    runner.close()
    return results, elapsed


def improved(graph: dict) -> dict:
    better = copy.deepcopy(graph)
    better["nodes"]["memory"] = {"type": "babyai.FullMap", "config": {}}
    better["nodes"]["explore"] = {"type": "babyai.FrontierExplore", "config": {}}
    return better


def rows(full: bool) -> list[dict]:
    """Rows for bench/run_all.py (reduced: the smoke tier; full: smoke and search)."""
    ex = load_executor("babyai")
    graph = json.loads(seed_graph_path("babyai").read_text())
    out = []
    for tier in (("smoke", "search") if full else ("smoke",)):
        episodes = ex.episodes(tier)
        seed = summarise(*run_graph(graph, episodes))
        start = time.perf_counter()
        oracle = summarise([ex.oracle(e) for e in episodes], time.perf_counter() - start)
        out += [{"metric": f"seeds/babyai success, {tier} tier ({seed['episodes']} episodes)",
                 "value": seed["success_rate"], "target": None,
                 "note": f"{seed['seconds_per_100']:.1f} s per 100 episodes, one process"},
                {"metric": f"BabyAI bot (oracle) success, {tier} tier", "value": oracle["success_rate"], "target": None}]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", default=str(ROOT / "seeds" / "babyai" / "graph.json"))
    parser.add_argument("--tiers", default="smoke,search")
    parser.add_argument("--no-oracle", action="store_true")
    parser.add_argument("--no-improved", action="store_true", help="skip the seed + FullMap + FrontierExplore row")
    parser.add_argument("--by-level", action="store_true", help="also print success per level")
    args = parser.parse_args()
    ex = load_executor("babyai")
    graph = json.loads(Path(args.graph).read_text())
    header = f"{'tier':8} {'agent':8} {'n':>4} {'success':>8} {'steps':>7} {'reward':>7} {'path_eff':>8} {'s/100 ep':>9}"
    print(header)
    print("-" * len(header))
    for tier in args.tiers.split(","):
        episodes = ex.episodes(tier)
        rows = [("seed", *run_graph(graph, episodes))]
        if not args.no_improved and {"memory", "explore"} <= set(graph["nodes"]):
            rows.append(("improved", *run_graph(improved(graph), episodes)))
        if not args.no_oracle:
            start = time.perf_counter()
            oracle = [ex.oracle(e) for e in episodes]
            rows.append(("oracle", oracle, time.perf_counter() - start))
        for name, results, seconds in rows:
            s = summarise(results, seconds)
            print(f"{tier:8} {name:8} {s['episodes']:>4} {s['success_rate']:>8.2f} {s['steps']:>7.1f} "
                  f"{s['reward']:>7.3f} {s['path_efficiency']:>8.3f} {s['seconds_per_100']:>9.2f}")
            if args.by_level:
                levels: dict[str, list] = {}
                for e, r in zip(episodes, results):
                    levels.setdefault(e["level"], []).append(bool(r["success"]))
                for level, hits in levels.items():
                    print(f"{'':17}{level:30} {sum(hits)}/{len(hits)}")


if __name__ == "__main__":
    main()

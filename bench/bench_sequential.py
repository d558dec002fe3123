"""Sequential racing vs fixed 100-episode evaluation, on real candidate pairs.

1. Evaluates the BabyAI seed and a few one- and two-node variants of it on the
   search tier (100 episodes; cached after the first run).
2. For each pair (variant vs seed, and the two-node variant vs each of its
   one-node halves): the fixed test's verdict on all 100 shared episodes
   (exact McNemar), and the sequential race (`architect evaluate --race`'s
   test, batches of 10) over REPEATS random episode orders: mean episodes used
   and how often its verdict agrees with the fixed one.
3. A/A: the seed against itself under noise (the search-noisy tier, three
   noise seeds): each repetition takes two noisy evaluations, swaps each
   episode's pair at random (the null: no difference), resamples the episodes
   and races. A "false accept" is a verdict of better or worse.

    python bench/bench_sequential.py [--repeats 200] [--aa-repeats 400]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.canvas.patch import apply_patch  # noqa: E402
from harness.evaluation import evaluate  # noqa: E402
from harness.evaluation.paired import compare  # noqa: E402
from harness.evaluation.racing import Race, RaceConfig  # noqa: E402
from harness.executor_api import seed_graph_path  # noqa: E402

VARIANTS = {
    "frontier+fullmap": [{"op": "retype_node", "id": "memory", "type": "babyai.FullMap", "config": {}},
                         {"op": "retype_node", "id": "explore", "type": "babyai.FrontierExplore", "config": {}}],
    "fullmap": [{"op": "retype_node", "id": "memory", "type": "babyai.FullMap", "config": {}}],
    "frontier": [{"op": "retype_node", "id": "explore", "type": "babyai.FrontierExplore", "config": {}}],
    "horizon16": [{"op": "set_config", "node": "memory", "pointer": "/horizon", "value": 16}],
    "explore12": [{"op": "set_config", "node": "explore", "pointer": "/length", "value": 12}],
    "lefthand": [{"op": "set_config", "node": "explore", "pointer": "/hand", "value": "left"}],
}
PAIRS = [(v, "seed") for v in VARIANTS] + [("frontier+fullmap", "fullmap"), ("frontier+fullmap", "frontier")]


def successes(metrics: dict) -> dict[str, float]:
    return {r["episode_id"]: float(r["success"]) for r in metrics["episodes"] if not r["infra_error"]}


def evaluate_graph(graph: dict, tier: str, tmp: Path, name: str, noise_seed: int = 0) -> dict[str, float]:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(graph))
    return successes(evaluate(path, tier, progress=False, noise_seed=noise_seed))


def race_once(a: np.ndarray, b: np.ndarray, config: RaceConfig) -> tuple[str, int]:
    race = Race(config)
    for start in range(0, len(a), config.batch):
        if race.add(a[start:start + config.batch], b[start:start + config.batch]):
            break
    return race.finish(), race.cs.n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=200, help="random episode orders per pair")
    ap.add_argument("--aa-repeats", type=int, default=400, help="A/A repetitions")
    ap.add_argument("--noise-seeds", type=int, default=3, help="noisy evaluations of the seed for A/A")
    args = ap.parse_args()
    config = RaceConfig()
    rng = np.random.default_rng(0)
    started = time.time()
    seed_graph = json.loads(seed_graph_path("babyai").read_text())
    scores: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        scores["seed"] = evaluate_graph(seed_graph, "search", tmp, "seed")
        for name, ops in VARIANTS.items():
            graph = apply_patch(copy.deepcopy(seed_graph), {"ops": ops})
            scores[name] = evaluate_graph(graph, "search", tmp, name)
        noisy = [evaluate_graph(seed_graph, "search-noisy", tmp, f"noisy{k}", noise_seed=k)
                 for k in range(1, args.noise_seeds + 1)]
    print(f"evaluations: {len(scores) + len(noisy)} x 100 episodes in {time.time() - started:.0f} s")
    print(f"sequential test: betting confidence sequence, alpha={config.alpha}, margin={config.margin}, "
          f"batch={config.batch}; fixed test: exact McNemar on 100 episodes at 95 %")
    print(f"{'pair':34} {'fixed (100 ep)':34} {'sequential: mean ep':>20} {'agrees':>7} {'savings':>8}")
    real_used = []
    for child, parent in PAIRS:
        ids = sorted(set(scores[child]) & set(scores[parent]))
        a = np.array([scores[parent][i] for i in ids])
        b = np.array([scores[child][i] for i in ids])
        fixed = compare(a, b)
        used, agree = [], 0
        for _ in range(args.repeats):
            order = rng.permutation(len(ids))
            verdict, n = race_once(a[order], b[order], config)
            used.append(n)
            agree += verdict == fixed.verdict
        mean_used = float(np.mean(used))
        if abs(fixed.delta) >= 0.10:
            real_used.append(mean_used)
        fixed_text = f"+{fixed.gained}/-{fixed.lost} p={fixed.p_value:.2g} {fixed.verdict}"
        print(f"{child + ' vs ' + parent:34} {fixed_text:34} {mean_used:20.1f} {agree / args.repeats:7.1%} "
              f"{len(ids) / mean_used:7.1f}x")
    if real_used:
        print(f"pairs with |delta| >= 10 points: {len(real_used)}; mean episodes {np.mean(real_used):.1f} vs 100 "
              f"-> {100 / np.mean(real_used):.1f}x fewer (goal >= 3x)")
    else:
        print("pairs with |delta| >= 10 points: none among these candidates")

    ids = sorted(set.intersection(*(set(n) for n in noisy)))
    runs = np.array([[n[i] for i in ids] for n in noisy])
    false_seq = false_fixed = 0
    aa_used = []
    for _ in range(args.aa_repeats):
        i, j = rng.choice(len(runs), size=2, replace=False)
        pick = rng.integers(0, len(ids), size=len(ids))          # resampled episodes
        swap = rng.random(len(ids)) < 0.5                        # exchangeable under the null
        a = np.where(swap, runs[j][pick], runs[i][pick])
        b = np.where(swap, runs[i][pick], runs[j][pick])
        verdict, n = race_once(a, b, config)
        aa_used.append(n)
        false_seq += verdict in ("better", "worse")
        false_fixed += compare(a, b, resamples=200).verdict in ("better", "worse")
    means = ", ".join(f"{r.mean():.2f}" for r in runs)
    print(f"A/A: seed vs itself on search-noisy (slip 0.1; noise seeds 1..{len(runs)}: success {means}), "
          f"{args.aa_repeats} repetitions")
    print(f"A/A false-accept rate (sequential): {false_seq / args.aa_repeats:.1%} ({false_seq}/{args.aa_repeats}), "
          f"mean episodes {np.mean(aa_used):.1f}; fixed McNemar: {false_fixed / args.aa_repeats:.1%} (goal <= 5 %)")


if __name__ == "__main__":
    main()

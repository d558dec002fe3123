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

Goals: >= 3x fewer episodes than the fixed 100-episode test on pairs at least
10 points apart; A/A false-accept rate <= 5 %. Rows for bench/run_all.py:
`rows(full)` (full: as above; reduced: the seed and the frontier / frontier+
fullmap variants (2 pairs >= 10 points apart, and one not), 100 search episodes
each, 2 noisy evaluations of 50 episodes for A/A, 100 orders and 200 A/A
repetitions). Evaluations are served from the result cache after a first run.
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


def evaluate_graph(graph: dict, tier: str, tmp: Path, name: str, noise_seed: int = 0,
                   episodes: int | None = None, stats: dict | None = None) -> dict[str, float]:
    """Per-episode success of `graph` on the tier (its first `episodes`); `stats`
    counts the episodes and those served from the result cache."""
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(graph))
    metrics = evaluate(path, tier, episodes=episodes, progress=False, noise_seed=noise_seed)
    if stats is not None:
        stats["episodes"] = stats.get("episodes", 0) + metrics["n"]
        stats["cached"] = stats.get("cached", 0) + metrics["cached"]
    return successes(metrics)


def evaluate_all(variants: list[str], noise_seeds: int, aa_episodes: int | None = None
                 ) -> tuple[dict[str, dict[str, float]], list[dict[str, float]], dict]:
    """The seed and `variants` on the search tier, and `noise_seeds` noisy evaluations
    of the seed (search-noisy, first `aa_episodes`); and {episodes, cached, seconds}."""
    started = time.time()
    stats: dict = {}
    seed_graph = json.loads(seed_graph_path("babyai").read_text())
    scores: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        scores["seed"] = evaluate_graph(seed_graph, "search", tmp, "seed", stats=stats)
        for name in variants:
            graph = apply_patch(copy.deepcopy(seed_graph), {"ops": VARIANTS[name]})
            scores[name] = evaluate_graph(graph, "search", tmp, name, stats=stats)
        noisy = [evaluate_graph(seed_graph, "search-noisy", tmp, f"noisy{k}", noise_seed=k, episodes=aa_episodes,
                                stats=stats)
                 for k in range(1, noise_seeds + 1)]
    stats["seconds"] = time.time() - started
    stats["evaluations"] = len(scores) + len(noisy)
    return scores, noisy, stats


def race_once(a: np.ndarray, b: np.ndarray, config: RaceConfig) -> tuple[str, int]:
    race = Race(config)
    for start in range(0, len(a), config.batch):
        if race.add(a[start:start + config.batch], b[start:start + config.batch]):
            break
    return race.finish(), race.cs.n


def race_pairs(scores: dict[str, dict[str, float]], pairs: list[tuple[str, str]], repeats: int,
               config: RaceConfig, rng) -> list[dict]:
    """Per pair: the fixed test on all shared episodes, and the race over `repeats` random orders."""
    out = []
    for child, parent in pairs:
        ids = sorted(set(scores[child]) & set(scores[parent]))
        a = np.array([scores[parent][i] for i in ids])
        b = np.array([scores[child][i] for i in ids])
        fixed = compare(a, b)
        used, agree = [], 0
        for _ in range(repeats):
            order = rng.permutation(len(ids))
            verdict, n = race_once(a[order], b[order], config)
            used.append(n)
            agree += verdict == fixed.verdict
        out.append({"child": child, "parent": parent, "n": len(ids), "fixed": fixed,
                    "mean_used": float(np.mean(used)), "agree": agree / repeats})
    return out


def aa_test(noisy: list[dict[str, float]], repeats: int, config: RaceConfig, rng) -> dict:
    """A/A: pairs of noisy evaluations of the same graph, episodes swapped at random and
    resampled; how often the race (and the fixed test) says better or worse."""
    ids = sorted(set.intersection(*(set(n) for n in noisy)))
    runs = np.array([[n[i] for i in ids] for n in noisy])
    false_seq = false_fixed = 0
    aa_used = []
    for _ in range(repeats):
        i, j = rng.choice(len(runs), size=2, replace=False)
        pick = rng.integers(0, len(ids), size=len(ids))          # resampled episodes
        swap = rng.random(len(ids)) < 0.5                        # exchangeable under the null
        a = np.where(swap, runs[j][pick], runs[i][pick])
        b = np.where(swap, runs[i][pick], runs[j][pick])
        verdict, n = race_once(a, b, config)
        aa_used.append(n)
        false_seq += verdict in ("better", "worse")
        false_fixed += compare(a, b, resamples=200).verdict in ("better", "worse")
    return {"repeats": repeats, "episodes": len(ids), "runs": len(runs), "means": [float(r.mean()) for r in runs],
            "false_seq": false_seq, "false_fixed": false_fixed, "mean_used": float(np.mean(aa_used))}


REDUCED_VARIANTS = ["frontier+fullmap", "frontier"]


def rows(full: bool) -> list[dict]:
    """Rows for bench/run_all.py (sizes: the module's docstring)."""
    variants = list(VARIANTS) if full else REDUCED_VARIANTS
    noise_seeds, aa_episodes, repeats, aa_repeats = (3, None, 200, 400) if full else (2, 50, 100, 200)
    config = RaceConfig()
    rng = np.random.default_rng(0)
    scores, noisy, stats = evaluate_all(variants, noise_seeds, aa_episodes)
    pairs = [(c, p) for c, p in PAIRS if c in scores and p in scores]
    raced = race_pairs(scores, pairs, repeats, config, rng)
    aa = aa_test(noisy, aa_repeats, config, rng)
    real = [r for r in raced if abs(r["fixed"].delta) >= 0.10]
    evaluated = (f"evaluations: {stats['evaluations']} ({stats['episodes']} episodes, {stats['cached']} from the "
                 f"result cache) in {stats['seconds']:.0f} s")
    if real:
        mean_used = float(np.mean([r["mean_used"] for r in real]))
        savings, savings_note = 100 / mean_used, (
            f"mean {mean_used:.1f} vs 100 episodes; " + "; ".join(
                f"{r['child']} vs {r['parent']} ({r['fixed'].verdict}, {r['mean_used']:.1f} ep)" for r in real)
            + f"; {evaluated}")
    else:
        savings, savings_note = None, f"no pair is 10 points apart among these candidates; {evaluated}"
    return [
        {"metric": f"race vs fixed 100-episode test: x fewer episodes, pairs >= 10 points apart ({len(real)} of "
                   f"{len(raced)} pairs, {repeats} orders each)",
         "value": savings, "unit": "x", "target": 3.0, "better": "higher", "note": savings_note},
        {"metric": f"race verdict agrees with the fixed test, mean over {len(raced)} pairs x {repeats} orders",
         "value": 100 * float(np.mean([r["agree"] for r in raced])), "unit": "%", "target": None,
         "note": "lowest: {agree:.1%}, {child} vs {parent}".format(**min(raced, key=lambda r: r["agree"]))},
        {"metric": f"A/A false-accept rate, race (seed vs itself, search-noisy, {aa['runs']} noise seeds x "
                   f"{aa['episodes']} episodes, {aa['repeats']} repetitions)",
         "value": 100 * aa["false_seq"] / aa["repeats"], "unit": "%", "target": 5.0,
         "note": f"{aa['false_seq']}/{aa['repeats']}, mean episodes {aa['mean_used']:.1f}; fixed McNemar "
                 f"{100 * aa['false_fixed'] / aa['repeats']:.1f} %; goal <= 5 % (run_all checks < 5)"
                 + ("" if full else "; races of up to 50 episodes here (100 with --full): the bound holds at any "
                                     "length, a longer race has more chances to cross it")},
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=200, help="random episode orders per pair")
    ap.add_argument("--aa-repeats", type=int, default=400, help="A/A repetitions")
    ap.add_argument("--noise-seeds", type=int, default=3, help="noisy evaluations of the seed for A/A")
    args = ap.parse_args()
    config = RaceConfig()
    rng = np.random.default_rng(0)
    scores, noisy, stats = evaluate_all(list(VARIANTS), args.noise_seeds)
    print(f"evaluations: {stats['evaluations']} x 100 episodes in {stats['seconds']:.0f} s")
    print(f"sequential test: betting confidence sequence, alpha={config.alpha}, margin={config.margin}, "
          f"batch={config.batch}; fixed test: exact McNemar on 100 episodes at 95 %")
    print(f"{'pair':34} {'fixed (100 ep)':34} {'sequential: mean ep':>20} {'agrees':>7} {'savings':>8}")
    real_used = []
    for r in race_pairs(scores, PAIRS, args.repeats, config, rng):
        fixed = r["fixed"]
        if abs(fixed.delta) >= 0.10:
            real_used.append(r["mean_used"])
        fixed_text = f"+{fixed.gained}/-{fixed.lost} p={fixed.p_value:.2g} {fixed.verdict}"
        print(f"{r['child'] + ' vs ' + r['parent']:34} {fixed_text:34} {r['mean_used']:20.1f} {r['agree']:7.1%} "
              f"{r['n'] / r['mean_used']:7.1f}x")
    if real_used:
        print(f"pairs with |delta| >= 10 points: {len(real_used)}; mean episodes {np.mean(real_used):.1f} vs 100 "
              f"-> {100 / np.mean(real_used):.1f}x fewer (goal >= 3x)")
    else:
        print("pairs with |delta| >= 10 points: none among these candidates")

    aa = aa_test(noisy, args.aa_repeats, config, rng)
    means = ", ".join(f"{m:.2f}" for m in aa["means"])
    print(f"A/A: seed vs itself on search-noisy (slip 0.1; noise seeds 1..{aa['runs']}: success {means}), "
          f"{args.aa_repeats} repetitions")
    print(f"A/A false-accept rate (sequential): {aa['false_seq'] / args.aa_repeats:.1%} "
          f"({aa['false_seq']}/{args.aa_repeats}), mean episodes {aa['mean_used']:.1f}; fixed McNemar: "
          f"{aa['false_fixed'] / args.aa_repeats:.1%} (goal <= 5 %)")


if __name__ == "__main__":
    main()

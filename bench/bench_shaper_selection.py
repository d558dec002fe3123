"""SHAPER's two selection rules on the same offline run setting: which picked the better
sealed-test score (figures printed, no assertions).

    python bench/bench_shaper_selection.py [--seed babyai-llm] [--rounds 4] [--train 15] [--val 24]
                                           [--test 50]

Runs `architect loop shaper <seed>` headless twice with the same seed, schedule,
splits and minibatch seed, every model call answered by the scripted stand-ins
(they are not models): once with `selection: study` (mean-reward top-K, the best
candidate seen, a fresh train minibatch per parent per round, the event history
to the optimizer) and once with `selection: paired` (paired wins minus losses
with the per-category regression guard, cached train rollouts, the 4 most recent
proposals). Each run ends with its final evaluation on every sealed test split;
printed per rule: the selected pair, its validation mean reward, and per test
split the sealed-test mean reward and success rate of the selected pair
("both") and of the seed, then which rule's pick scored higher on the sealed
test (or that they tie), whichever it is. The wall time of each run is printed
too. `rows(full)` gives the figures to bench/run_all.py (reduced: 2 rounds,
train 5, validation 8; full: the study's 4 rounds, train 15, validation 24).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's harness, not an installed one

RULES = ("study", "paired")


def run_rule(seed: str, rule: str, rounds: int, train: int, val: int, test: int | None) -> dict:
    from harness.variants.shaper.config import build_config
    from harness.variants.shaper.runner import run_headless

    config = build_config(rounds=rounds, skill_rounds=rounds // 2, train_episodes=train, val_episodes=val,
                          smoke_episodes=1, test_episodes=test, selection=rule, scripted_models=True)
    with tempfile.TemporaryDirectory(prefix=f"bench-shaper-{rule}-") as tmp:
        started = time.perf_counter()
        result = run_headless(seed, runs_dir=Path(tmp), run_id=rule, config=config)
        wall = time.perf_counter() - started
        from harness.variants.shaper.store import ShaperFiles

        beam = ShaperFiles(Path(tmp) / rule / "memory").read_beam()
    chosen = result["selected"]["harness"] or result["selected"]["skill"]
    splits = {}
    for split in result["final"]:
        rows = {row["configuration"]: row for row in split["rows"]}
        splits[split["split"]] = {"both": rows["both"], "seed": rows["seed"], "episodes": split["episodes"]}
    return {"rule": rule, "selected": chosen, "validation": beam["candidates"][chosen]["mean_reward"],
            "iterations": result["iterations"], "splits": splits, "wall": wall,
            "test": sum(s["both"]["mean_reward"] * s["episodes"] for s in splits.values())
                    / sum(s["episodes"] for s in splits.values())}


def verdict(results: dict) -> str:
    study, paired = results["study"]["test"], results["paired"]["test"]
    if abs(study - paired) < 1e-9:
        return f"tie: both rules' picks score {study:.3f} mean reward on the sealed test"
    better = "study" if study > paired else "paired"
    return f"the {better} rule picked the better sealed-test score ({max(study, paired):.3f} vs {min(study, paired):.3f})"


def measure(seed: str, rounds: int, train: int, val: int, test: int | None) -> dict:
    return {rule: run_rule(seed, rule, rounds, train, val, test) for rule in RULES}


def rows(full: bool) -> list[dict]:
    rounds, train, val = (4, 15, 24) if full else (2, 5, 8)
    results = measure("babyai-llm", rounds, train, val, None)
    size = f"babyai-llm, {rounds} rounds, train {train}, validation {val}"
    out = [{"metric": f"SHAPER {rule} rule: sealed-test mean reward of its pick ({size})",
            "value": r["test"], "unit": "", "target": None,
            "note": f"selected {r['selected']} (validation {r['validation']:.3f}); {r['iterations']} iteration(s); "
                    f"run wall {r['wall']:.1f} s; scripted stand-ins, no LLM"} for rule, r in results.items()]
    out[-1]["note"] += "; " + verdict(results)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", default="babyai-llm")
    parser.add_argument("--rounds", type=int, default=4, help="rounds, half of them skill rounds (the study: 4)")
    parser.add_argument("--train", type=int, default=15, help="train episodes (the study: 15)")
    parser.add_argument("--val", type=int, default=24, help="validation episodes (the study: 24)")
    parser.add_argument("--test", type=int, default=None, help="episodes per test split (default: the profile's)")
    args = parser.parse_args()

    results = measure(args.seed, args.rounds, args.train, args.val, args.test)
    print(f"{args.seed}: {args.rounds} rounds, train {args.train}, validation {args.val}; scripted stand-ins (no LLM)")
    for rule, r in results.items():
        print(f"{rule}: selected {r['selected']} (validation mean reward {r['validation']:.3f}) after "
              f"{r['iterations']} iteration(s); run wall {r['wall']:.1f} s")
        for name, split in r["splits"].items():
            print(f"  {name} ({split['episodes']} episodes): selected {split['both']['mean_reward']:.3f} mean reward, "
                  f"{split['both']['success_rate']:.1%} success; seed {split['seed']['mean_reward']:.3f}, "
                  f"{split['seed']['success_rate']:.1%}")
        print(f"  all test splits: {r['test']:.3f} mean reward")
    print(verdict(results))


if __name__ == "__main__":
    main()

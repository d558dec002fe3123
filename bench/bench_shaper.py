"""Wall time of SHAPER rounds against their critical path (figures printed, no assertions).

    python bench/bench_shaper.py [--delay 0.2] [--train 15] [--val 24] [--beam 3] [--branching 2]

Runs `architect loop shaper babyai-llm` headless for the two skill rounds of
the study's beam (width 3, branching 2, minibatch 4) with every model call
(planner, judge, summariser, optimizer) answered by the scripted stand-ins on
a loopback server after `--delay` seconds (they are not models). Within a
round, parents' rollouts + gradients + proposals run concurrently, then all
proposals' check + smoke + validation run concurrently, then the commits run
one by one. The critical path of a round is its slowest parent's
(rollout + judge + summary + optimizer) plus that parent's slowest proposal
validation, plus the commits (sequential by design), each duration measured
in the run; the goal is wall <= 1.5 x critical path. Also printed: the
model-latency floor of the same chain (model calls that must follow each
other, times the delay: the longest train episode's planner calls, one judge,
one summary, the optimizer calls with a repair, the longest smoke and
validation episodes' planner calls), which no schedule can beat.
`rows(full)` gives the same figures to bench/run_all.py (reduced: train 5,
validation 4, 0.1 s per model call).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's harness, not an installed one

TARGET = 1.5


def measure(delay: float, train: int, val: int, beam: int, branching: int) -> dict:
    """One headless SHAPER run of two skill rounds; per round: parents, proposals,
    the slowest rollout+gradient+proposals, the slowest validation, the commits,
    wall, critical path and model-latency floor (seconds)."""
    from harness.variants.shaper.config import build_config
    from harness.variants.shaper.runner import run_headless

    config = build_config(rounds=2, skill_rounds=2, beam_width=beam, branching=branching,
                          train_episodes=train, val_episodes=val, smoke_episodes=1,
                          final_test=False, scripted_models=True, model_delay_s=delay)
    with tempfile.TemporaryDirectory(prefix="bench-shaper-") as tmp:
        started = time.perf_counter()
        result = run_headless("babyai-llm", runs_dir=Path(tmp), run_id="bench", config=config)
        total = time.perf_counter() - started
        floors = latency_floors(Path(tmp) / "bench", delay)
    rounds = []
    for r, timing in sorted(result["timings"].items()):
        generate, validate, commits = timing.get("generate", {}), timing.get("validate", {}), timing.get("commit", {})
        paths = []
        for parent, seconds in generate.items():
            own = [v for k, v in validate.items() if f"-{parent}-" in k]
            paths.append(seconds + (max(own) if own else 0.0))
        rounds.append({"round": r, "parents": len(generate), "proposals": len(validate),
                       "generate_max": max(generate.values()), "validate_max": max(validate.values(), default=0),
                       "commits": sum(commits.values()), "wall": timing["wall"],
                       "critical": max(paths) + sum(commits.values()), "floor": floors[r]})
    return {"total": total, "rounds": rounds}


def rows(full: bool) -> list[dict]:
    """Rows for bench/run_all.py. full: the study's sizes (train 15, validation 24);
    reduced: train 5, validation 4, 0.1 s per model call. Beam 3, branching 2 in both."""
    delay, train, val, beam, branching = (0.2, 15, 24, 3, 2) if full else (0.1, 5, 4, 3, 2)
    m = measure(delay, train, val, beam, branching)
    size = f"train {train}, validation {val}, beam {beam}, branching {branching}, {delay:.1f} s per model call"
    out = []
    for r in m["rounds"]:
        out.append({"metric": f"SHAPER round {r['round']} wall / critical path ({size})",
                    "value": r["wall"] / r["critical"], "unit": "x", "target": TARGET,
                    "note": f"{r['parents']} parent(s), {r['proposals']} proposal(s); wall {r['wall']:.2f} s, "
                            f"critical path {r['critical']:.2f} s (rollout+gradient+proposals max "
                            f"{r['generate_max']:.2f} s, validation max {r['validate_max']:.2f} s, commits "
                            f"{r['commits']:.2f} s); scripted stand-ins, no LLM; target: <= {TARGET}"
                            + ("" if full else "; reduced (the study: train 15, validation 24, 0.2 s per call): "
                                               "shorter phases, so fixed per-phase costs weigh more"),
                    **({} if full else {"no_verdict": "the target is the study's size (--full)"})})
        out.append({"metric": f"SHAPER round {r['round']} wall / model-latency floor ({size})",
                    "value": r["wall"] / r["floor"], "unit": "x", "target": None,
                    "note": f"floor {r['floor']:.2f} s: the model calls that must follow each other, times the "
                            "delay; no schedule can beat it"})
    out[0]["note"] += f"; whole run {m['total']:.1f} s"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds before each scripted answer")
    parser.add_argument("--train", type=int, default=15, help="train episodes (the study: 15)")
    parser.add_argument("--val", type=int, default=24, help="validation episodes (the study: 24)")
    parser.add_argument("--beam", type=int, default=3)
    parser.add_argument("--branching", type=int, default=2)
    args = parser.parse_args()

    m = measure(args.delay, args.train, args.val, args.beam, args.branching)
    print(f"scripted stand-ins (no LLM), {args.delay:.3f} s per model call; train {args.train}, "
          f"validation {args.val}, beam {args.beam}, branching {args.branching}; whole run {m['total']:.1f} s")
    for r in m["rounds"]:
        n = r["round"]
        print(f"round {n}: {r['parents']} parent(s), {r['proposals']} proposal(s) | "
              f"rollout+gradient+proposals max {r['generate_max']:.2f} s | validation max "
              f"{r['validate_max']:.2f} s | commits {r['commits']:.2f} s")
        print(f"round {n}: wall {r['wall']:.2f} s, critical path {r['critical']:.2f} s, "
              f"wall / critical {r['wall'] / r['critical']:.2f} (target <= {TARGET}); "
              f"model-latency floor {r['floor']:.2f} s, wall / floor {r['wall'] / r['floor']:.2f}")


def latency_floors(root: Path, delay: float) -> dict:
    """Per round: the longest chain of model calls that must follow each other, times `delay`."""
    beam = json.loads((root / "memory" / "shaper" / "beam.json").read_text())
    floors = {}
    for entry in beam["rounds"]:
        r = entry["round"]
        chains = []
        for parent in entry["beam_before"]:
            folder = root / "memory" / "shaper" / "rollouts"   # per round under the study's rule, else per candidate
            kept = folder / f"r{r}-{parent}.json"
            rollouts = json.loads((kept if kept.is_file() else folder / f"{parent}.json").read_text())
            train = max(e["meta"]["planner_steps"] for e in rollouts["episodes"])
            own = [p for p in beam["proposals"] if p["round"] == r and p["parent"] == parent]
            optimizer = max((1 + len(p["rejections"]) for p in own), default=1)
            validation = 0
            for p in own:
                if p["iteration"] is None:
                    continue
                folder = root / "iterations" / str(p["iteration"])
                calls = [max(e["model_calls"] for e in json.loads((folder / kind / "metrics.json").read_text())
                             ["episodes"]) for kind in ("smoke", "eval")]
                validation = max(validation, sum(calls))
            chains.append(train + 2 + optimizer + validation)
        floors[str(r)] = max(chains) * delay
    return floors


if __name__ == "__main__":
    main()

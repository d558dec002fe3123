"""Calibrate a candidate's stopping threshold with split conformal prediction, as
ExploreEQA's paper calibrates its stop (its released code has no stop).

The candidate runs on the calibration tier with stopping on confidence switched
off (every `eqa.ConfidenceStop` gets `stop_when_confident: false`, so each
question runs to its budget or until nothing is left to explore). For question i
the nonconformity score is 1 - s_i(true answer), s_i(y) being the stop node's
final max over steps of confidence x probability. q_hat is the
ceil((n+1)(1-epsilon))/n empirical quantile of those n scores, and the threshold
1 - q_hat: with it, the final prediction set {y : s(y) >= threshold} holds the true
answer with probability at least 1 - epsilon on exchangeable questions. Put the
threshold into the stop node's config (`set_config`), as the seeds do.

    python -m executors.eqa.calibrate seeds/explore-eqa-heuristic [--epsilon 0.1] [--tier calibration]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

from executors.eqa.questions import LETTERS
from harness.canvas.graph import load_graph
from harness.errors import UserError
from harness.evaluation.trace import read_log
from harness.fileio import write_json_atomic

STOP_TYPE = "eqa.ConfidenceStop"


def conformal_threshold(nonconformity: list[float], epsilon: float) -> tuple[float, float]:
    """(q_hat, threshold = 1 - q_hat) of split conformal prediction at level epsilon."""
    n = len(nonconformity)
    if n == 0:
        raise UserError("calibration needs at least one scored question")
    rank = math.ceil((n + 1) * (1 - epsilon))
    q_hat = 1.0 if rank > n else sorted(nonconformity)[rank - 1]
    return q_hat, 1.0 - q_hat


def final_scores(log: Path) -> list[float] | None:
    """The stop node's last logged scores s(A..D) of one episode log, or None."""
    _, firings = read_log(log)
    logged = [f["self"]["scores"] for f in firings if f.get("type") == STOP_TYPE and "scores" in (f.get("self") or {})]
    return logged[-1] if logged else None


def calibrate(candidate: Path, *, tier: str = "calibration", epsilon: float = 0.1, workers: int | None = None,
              progress: bool = True) -> dict:
    from harness.evaluation import evaluate

    if not 0 < epsilon < 1:
        raise UserError(f"--epsilon must be between 0 and 1, got {epsilon}")
    graph = load_graph(candidate)
    stops = [nid for nid, node in graph["nodes"].items() if node["type"] == STOP_TYPE]
    if not stops:
        raise UserError(f"{candidate}: no {STOP_TYPE} node to calibrate")
    source = Path(candidate) if Path(candidate).is_dir() else Path(candidate).parent
    with tempfile.TemporaryDirectory(prefix="eqa-calibrate-") as tmp:
        copy = Path(tmp) / "candidate"
        shutil.copytree(source, copy)
        for nid in stops:
            graph["nodes"][nid].setdefault("config", {})["stop_when_confident"] = False
        write_json_atomic(copy / "graph.json", graph)
        out = Path(tmp) / "out"
        metrics = evaluate(copy, tier, workers=workers, out_dir=out, progress=progress)
        nonconformity, covered_by_argmax = [], 0
        for record in metrics["episodes"]:
            scores = final_scores(out / record["log"]) if record.get("log") else None
            truth = (record.get("metrics") or {}).get("truth")
            if scores is None or truth not in LETTERS:
                continue
            nonconformity.append(1.0 - scores[LETTERS.index(truth)])
            covered_by_argmax += scores.index(max(scores)) == LETTERS.index(truth)
    q_hat, threshold = conformal_threshold(nonconformity, epsilon)
    return {"ok": True, "candidate": str(candidate), "tier": tier, "epsilon": epsilon, "n": len(nonconformity),
            "q_hat": q_hat, "threshold": threshold, "stop_nodes": stops,
            "accuracy_at_budget": covered_by_argmax / len(nonconformity)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m executors.eqa.calibrate", description=__doc__.split("\n\n")[0])
    parser.add_argument("candidate", type=Path, help="candidate folder or graph.json with an eqa.ConfidenceStop node")
    parser.add_argument("--tier", default="calibration", help="the tier to calibrate on (default: calibration)")
    parser.add_argument("--epsilon", type=float, default=0.1, help="miscoverage level (default 0.1)")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        result = calibrate(args.candidate, tier=args.tier, epsilon=args.epsilon, workers=args.workers)
    except UserError as exc:
        print(json.dumps({"ok": False, "error": exc.message, "kind": type(exc).__name__}))
        return exc.exit_code
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

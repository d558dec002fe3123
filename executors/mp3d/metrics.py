"""R2R navigation metrics of one trajectory, with the standard definitions.

Distances are shortest-path distances on the scan's navigation graph (edge
weight = Euclidean distance between viewpoint positions). The agent's path is
its sequence of viewpoints with consecutive repeats (turns in place) dropped.

- NE (nav_error): distance from the final viewpoint to the goal.
- SR (success): NE < 3 m; with explicit STOP (`stopped` given), also the agent's
  stop: an episode that ended without one fails. OSR (oracle_success): some
  visited viewpoint < 3 m.
- TL (trajectory_length): sum of the distances between consecutive viewpoints.
- SPL: success · ℓ / max(TL, ℓ, 0.01), ℓ = length of the reference path.
- nDTW: exp(−DTW(path, reference) / (|reference| · 3 m)); SDTW = success · nDTW.
- CLS: path coverage · length score (Jain et al. 2019).
- trajectory_steps: moves (len(path) − 1).
"""

from __future__ import annotations

import math

import numpy as np

from executors.mp3d.graph import ScanGraph

ERROR_MARGIN = 3.0


def viewpoint_path(trajectory: list) -> list[str]:
    """Viewpoints of a trajectory ([vp, heading, elevation] items or plain ids), repeats dropped."""
    out: list[str] = []
    for item in trajectory:
        vp = item if isinstance(item, str) else item[0]
        if not out or out[-1] != vp:
            out.append(vp)
    return out


def _dtw(graph: ScanGraph, path: list[str], reference: list[str]) -> float:
    dist = np.array([[graph.distance(p, r) for r in reference] for p in path])
    n, m = dist.shape
    table = np.full((n + 1, m + 1), np.inf)
    table[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            table[i, j] = dist[i - 1, j - 1] + min(table[i - 1, j], table[i, j - 1], table[i - 1, j - 1])
    return float(table[n, m])


def _cls(graph: ScanGraph, path: list[str], reference: list[str]) -> float:
    coverage = float(np.mean([math.exp(-min(graph.distance(r, p) for p in path) / ERROR_MARGIN)
                              for r in reference]))
    expected = coverage * _length(graph, reference)
    length = _length(graph, path)
    score = expected / (expected + abs(expected - length)) if expected + abs(expected - length) > 0 else 0.0
    return coverage * score


def _length(graph: ScanGraph, path: list[str]) -> float:
    return float(sum(graph.distance(a, b) for a, b in zip(path[:-1], path[1:])))


def score_trajectory(graph: ScanGraph, trajectory: list, reference: list[str], stopped: bool | None = None) -> dict:
    """Every metric of one trajectory against the reference path (R2R's `path`); with
    `stopped` given, success needs the agent's explicit stop as well (VLN-CE's rule)."""
    path = viewpoint_path(trajectory)
    if not path or path[0] != reference[0]:
        raise ValueError("the trajectory must start at the reference path's first viewpoint")
    goal = reference[-1]
    nav_error = graph.distance(path[-1], goal)
    oracle_error = min(graph.distance(p, goal) for p in path)
    length = _length(graph, path)
    reference_length = _length(graph, reference)
    success = float(nav_error < ERROR_MARGIN and stopped is not False)
    ndtw = math.exp(-_dtw(graph, path, reference) / (len(reference) * ERROR_MARGIN))
    return {
        "success": success,
        "oracle_success": float(oracle_error < ERROR_MARGIN),
        "nav_error": nav_error,
        "oracle_error": oracle_error,
        "spl": success * reference_length / max(length, reference_length, 0.01),
        "ndtw": ndtw,
        "sdtw": success * ndtw,
        "cls": _cls(graph, path, reference),
        "trajectory_length": length,
        "trajectory_steps": len(path) - 1,
        "reference_length": reference_length,
    }


def score_results(results: list[dict], split: str, dataset=None) -> dict:
    """R2R's evaluation of a results file ([{instr_id, trajectory: [[viewpoint, heading, elevation], ...]}]):
    per-instruction scores and their means (SR, OSR, SPL, nDTW, SDTW, CLS in %; NE, TL in m)."""
    from executors.mp3d.data_r2r import dataset as default_dataset

    ds = dataset or default_dataset()
    items = ds.split(split)
    per = {}
    for record in results:
        item = items[record["instr_id"]]
        per[record["instr_id"]] = score_trajectory(ds.graph(item["scan"]), record["trajectory"], item["path"])
    n = len(per) or 1
    mean = {k: sum(s[k] for s in per.values()) / n for k in next(iter(per.values()), {})}
    summary = {k: 100 * mean[k] for k in ("success", "oracle_success", "spl", "ndtw", "sdtw", "cls") if k in mean}
    summary.update({k: mean[k] for k in ("nav_error", "oracle_error", "trajectory_length", "trajectory_steps")
                    if k in mean})
    return {"n": len(per), "summary": summary, "per_instruction": per}


if __name__ == "__main__":
    import json
    import sys

    if len(sys.argv) != 3:
        sys.exit("usage: python -m executors.mp3d.metrics RESULTS.json SPLIT")
    with open(sys.argv[1], encoding="utf-8") as fh:
        print(json.dumps(score_results(json.load(fh), sys.argv[2])["summary"], indent=2))

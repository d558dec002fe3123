"""Fitness conversions: neutral evaluation results → each variant's score.

Also the few views of a run that every variant helper needs (committed rows
and scores, proposals), built on harness.rundir's readers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import UserError
from harness.rundir.layout import RunPaths
from harness.rundir.ledger import read_rows
from harness.rundir.records import committed_iterations, read_iteration_metrics

BOOTSTRAP_RESAMPLES = 100_000


# --------------------------------------------------------------------------- bootstrap


@dataclass(frozen=True)
class BootstrapCI:
    """Percentiles of the bootstrap distribution of the mean, as fractions."""

    low: float
    high: float
    median: float
    n: int
    resamples: int

    def text(self) -> str:
        return format_bootstrap(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "low": self.low,
            "high": self.high,
            "median": self.median,
            "episodes": self.n,
            "resamples": self.resamples,
            "text": self.text(),
        }


def bootstrap_ci(
    scores,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapCI:
    """Percentile bootstrap of the mean: `resamples` resamples with replacement."""
    from harness.evaluation.paired import bootstrap_mean

    values = np.asarray(scores, dtype=float).ravel()
    try:
        low, median, high = bootstrap_mean(values, confidence=confidence, resamples=resamples, seed=seed)
    except ValueError as exc:
        raise UserError(f"bootstrap: {exc}") from None
    return BootstrapCI(low, high, median, int(values.size), int(resamples))


def format_bootstrap(ci: BootstrapCI) -> str:
    """ADAS's fitness string, percentages with one decimal."""
    return (
        f"95% Bootstrap Confidence Interval: ({ci.low * 100:.1f}%, {ci.high * 100:.1f}%), "
        f"Median: {ci.median * 100:.1f}%"
    )


# --------------------------------------------------------------------------- metrics


def episode_scores(metrics: dict[str, Any], primary_metric: str | None = None) -> list[float]:
    """Per-episode primary scores from a metrics.json (success → 1.0/0.0)."""
    episodes = metrics.get("episodes")
    if not isinstance(episodes, list):
        raise UserError("metrics: no 'episodes' list of per-episode records")
    metric = primary_metric or _primary_name(metrics)
    scores = []
    for i, record in enumerate(episodes):
        if record.get("infra_error"):
            continue  # an infrastructure failure is not a score of the candidate
        value = _episode_value(record, metric)
        if value is None:
            raise UserError(f"metrics: episode {i} has no value for primary metric {metric!r}")
        scores.append(value)
    return scores


def _primary_name(metrics: dict[str, Any]) -> str:
    primary = metrics.get("primary")
    if isinstance(primary, dict) and isinstance(primary.get("metric"), str):
        return primary["metric"]
    if isinstance(metrics.get("primary_metric"), str):
        return metrics["primary_metric"]
    return "success"


def _episode_value(record: dict[str, Any], metric: str) -> float | None:
    # A metric name like "success_rate" is the mean of per-episode "success".
    for key in (metric, metric.removesuffix("_rate"), "success"):
        for source in (record, record.get("metrics") or {}):
            value = source.get(key)
            if isinstance(value, bool):
                return 1.0 if value else 0.0
            if isinstance(value, (int, float)):
                return float(value)
    return None


def primary_mean(metrics: dict[str, Any]) -> float | None:
    """Primary mean (fraction) of a metrics.json, from its summary or its episodes."""
    primary = metrics.get("primary")
    if isinstance(primary, dict) and isinstance(primary.get("mean"), (int, float)):
        return float(primary["mean"])
    try:
        scores = episode_scores(metrics)
    except UserError:
        return None
    return float(np.mean(scores)) if scores else None


def fitness_for(variant: str, metrics: dict[str, Any], *, seed: int = 0,
                primary_metric: str | None = None, parent_metrics: dict[str, Any] | None = None) -> dict[str, Any]:
    """The variant's view of one evaluation: what its proposer and selector read,
    with the paired verdict against the parent when its evaluation is given."""
    scores = episode_scores(metrics, primary_metric)
    mean = float(np.mean(scores)) if scores else 0.0
    result: dict[str, Any] = {
        "variant": variant,
        "episodes": len(scores),
        "mean": mean,
        "score_percent": round(mean * 100.0, 4),
    }
    from harness.variant_api import find_variant

    if find_variant(variant).fitness == "bootstrap":
        ci = bootstrap_ci(scores, seed=seed)
        result["bootstrap"] = ci.to_dict()
        result["text"] = ci.text()
    else:
        result["text"] = f"Mean score: {mean * 100:.1f}%"
    if parent_metrics is not None:
        from harness.evaluation.compare import verdict_summary

        result["vs_parent"] = verdict_summary(parent_metrics, metrics)
    return result


# --------------------------------------------------------------------------- run views


def committed_rows(paths: RunPaths) -> dict[int, dict[str, Any]]:
    """Committed ledger rows by iteration (iteration 0 included)."""
    return {row["iteration"]: row for row in read_rows(paths.ledger) if row.get("status") == "committed"}


def iteration_score(paths: RunPaths, iteration: int, row: dict[str, Any] | None = None) -> float | None:
    """Mean primary score (fraction) of a committed iteration: ledger first, else metrics."""
    if row and isinstance(row.get("primary"), dict) and isinstance(row["primary"].get("mean"), (int, float)):
        return float(row["primary"]["mean"])
    metrics = read_iteration_metrics(paths, iteration)
    return primary_mean(metrics) if metrics else None


def committed_scores(paths: RunPaths) -> dict[int, float]:
    """Mean primary score (fraction) of every committed, evaluated iteration."""
    rows = committed_rows(paths)
    scores = {}
    for iteration in sorted(set(rows) | set(committed_iterations(paths))):
        score = iteration_score(paths, iteration, rows.get(iteration))
        if score is not None:
            scores[iteration] = score
    return scores


def read_proposal(path: Path) -> tuple[dict[str, Any], str]:
    """(front matter, body) of a proposal.md; missing file or no front matter → ({}, text)."""
    from harness.rundir import proposal

    meta, body = proposal.read(path)
    return meta, body.strip()


def staging_iteration(staging: Path) -> int:
    return int(staging.name.split("-", 1)[0])

"""Per-episode records and the summary that goes into metrics.json."""

from __future__ import annotations

import json

from harness.evaluation.reconcile import findings
from harness.evaluation.stats import mean_or_none, summarize_primary

# Metrics that are the episode's success itself (an episode that ended in an error scores 0, never
# drops out): a task's success rate, and the accuracy of question answering (eqa).
SUCCESS_NAMES = ("success", "success_rate", "accuracy")
RESULT_NUMBERS = ("reward", "steps", "ticks", "model_calls", "input_tokens", "output_tokens", "cost_usd", "wall_seconds")


def episode_record(episode: dict, result: dict | None, *, infra_error: str | None = None,
                   attempts: int = 1, cached: bool = False, log: str | None = None) -> dict:
    result = result or {}
    rec = {
        "episode_id": str(episode["episode_id"]),
        "level": episode.get("level"),
        "seed": episode.get("seed"),
        "success": bool(result.get("success", False)) if infra_error is None else False,
        "steps": int(result.get("steps") or 0),
        "ticks": int(result.get("ticks") or 0),
        "reward": float(result.get("reward") or 0.0),
        "termination": result.get("termination") if infra_error is None else "infra_error",
        "error": result.get("error"),
        "infra_error": infra_error,
        "metrics": jsonable(dict(result.get("metrics") or {})),
        "model_calls": int(result.get("model_calls") or 0),
        "input_tokens": int(result.get("input_tokens") or 0),
        "output_tokens": int(result.get("output_tokens") or 0),
        "cost_usd": float(result.get("cost_usd") or 0.0),
        "wall_seconds": float(result.get("wall_seconds") or 0.0),
        "attempts": attempts,
        "cached": cached,
        "log": log,
    }
    if result.get("log_gap") is not None:
        rec["log_gap"] = jsonable(result["log_gap"])
    if rec["termination"] is None:
        rec["termination"] = "unknown"
    return rec


def _plain(value):
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    return str(value)


def jsonable(obj):
    """The same data as plain JSON types, so a record reads the same fresh,
    from metrics.json and from the cache."""
    return json.loads(json.dumps(obj, default=_plain))


def metric_value(record: dict, name: str):
    if name in SUCCESS_NAMES:
        return 1.0 if record["success"] else 0.0
    value = record.get(name)
    if value is None or isinstance(value, (dict, list, str)):
        value = record["metrics"].get(name)
    if isinstance(value, bool):
        return float(value)
    return float(value) if isinstance(value, (int, float)) else None


def summarize(records: list[dict], primary_metric: str, secondary_metrics: list[str]) -> dict:
    scored = [r for r in records if r["infra_error"] is None]
    primary_values = [v for v in (metric_value(r, primary_metric) for r in scored) if v is not None]
    primary = summarize_primary(primary_metric, primary_values)
    secondary = {}
    for name in secondary_metrics:
        values = [v for v in (metric_value(r, name) for r in scored) if v is not None]
        secondary[name] = mean_or_none(values)
    terminations: dict[str, int] = {}
    for r in records:
        terminations[r["termination"]] = terminations.get(r["termination"], 0) + 1
    out = {
        "primary": primary,
        "secondary": secondary,
        "n": len(scored),
        "n_episodes": len(records),
        "infra_failures": len(records) - len(scored),
        "agent_errors": sum(1 for r in scored if r["error"]),
        "terminations": dict(sorted(terminations.items())),
        "complete": len(scored) == len(records),
        "model": {
            "calls": sum(r["model_calls"] for r in records),
            "input_tokens": sum(r["input_tokens"] for r in records),
            "output_tokens": sum(r["output_tokens"] for r in records),
            "cost_usd": sum(r["cost_usd"] for r in records),
        },
    }
    if any("log_gap" in r for r in records):
        out["findings"] = findings(records)
    return out

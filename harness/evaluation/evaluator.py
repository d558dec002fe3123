"""`evaluate(candidate, tier)`: roll a candidate out on a fixed tier of episodes."""

from __future__ import annotations

import datetime as _dt
import math
import os
import time
from pathlib import Path

from harness.errors import UserError
from harness.fileio import write_json_atomic
from harness.evaluation.cache import ResultCache, code_fingerprint
from harness.evaluation.candidate import Candidate, load_candidate
from harness.evaluation.pool import PoolConfig, run_pool
from harness.evaluation.progress import progress_bar
from harness.evaluation.records import episode_record, summarize

METRICS_SCHEMA_VERSION = 1
DEFAULT_WALL_SECONDS = 600.0
GRAPH_FACTORY = "harness.evaluation.runners:GraphEpisodeRunner"
ORACLE_FACTORY = "harness.evaluation.runners:OracleEpisodeRunner"


def hang_grace_seconds(wall: float) -> float:
    """Extra time past an episode's wall budget before its worker counts as hung.
    The runtime checks the budget between node firings, so a slow firing can
    overrun it a little without hanging."""
    env = os.environ.get("ARCHITECT_HANG_GRACE_SECONDS")
    if env:
        return float(env)
    return max(10.0, 0.5 * wall)


def evaluate(candidate, tier: str, *, episodes: int | None = None, workers: int | None = None,
             in_flight: int | None = None, out_dir=None, use_cache: bool = True,
             progress: bool = True, oracle: bool = False, only: list[str] | None = None,
             noise_seed: int = 0, reseed: int = 0) -> dict:
    """Evaluate CANDIDATE (a graph.json or a folder holding one) on a tier; return
    the content of metrics.json (also written to `out_dir` when given).
    `only`: just these episode ids of the tier. `noise_seed`: the seed of a
    stochastic tier's noise (part of each episode and of the cache key).
    `reseed`: fresh episodes, each episode's seed shifted by `reseed` (its id
    marked `~seed+<reseed>`), for reruns of a deterministic agent."""
    started = time.time()
    cand = load_candidate(Path(candidate))
    ex = cand.executor
    specs = _select(_tier_episodes(ex, tier, episodes), only, tier)
    if reseed:
        if not all("seed" in s for s in specs):
            raise UserError(f"tier {tier!r} of executor {ex.name!r}: episodes have no seed to draw fresh ones from")
        specs = [dict(s, seed=int(s["seed"]) + reseed, episode_id=f"{s['episode_id']}~seed+{reseed}") for s in specs]
    stochastic = any(s.get("slip") for s in specs)
    if stochastic:
        specs = [dict(s, noise_seed=int(noise_seed)) for s in specs]
    if not oracle:
        _check_model_setup(cand)
    out = Path(out_dir) if out_dir is not None else None
    if out is not None:
        (out / "episodes").mkdir(parents=True, exist_ok=True)
        for stale in (out / "episodes").glob("*.jsonl"):  # logs of an earlier evaluation into this folder
            stale.unlink()

    n_workers = max(1, int(workers or os.cpu_count() or 1))
    total_in_flight = max(1, int(in_flight or _default_in_flight(cand, n_workers)))
    n_workers = min(n_workers, total_in_flight)
    threads = math.ceil(total_in_flight / n_workers)

    records: dict[int, dict] = {}
    cache = None
    if use_cache and not oracle:
        from harness.models import model_fingerprint

        code = code_fingerprint(ex.package_dir) + model_fingerprint(cand.graph, cand.directory)
        cache = ResultCache(cand.hash, f"{tier}~noise{noise_seed}" if stochastic else tier, code=code)
    tasks = []
    for index, ep in enumerate(specs):
        log_rel = None if (out is None or oracle) else f"episodes/{_safe(ep['episode_id'])}.jsonl"
        log_abs = str(out / log_rel) if log_rel else None
        hit = cache.get(ep, Path(log_abs) if log_abs else None) if cache else None
        if hit is not None:
            records[index] = episode_record(ep, hit, cached=True, log=log_rel)
            continue
        tasks.append({"index": index, "episode": ep, "log_path": log_abs, "log_rel": log_rel})

    wall_budget = float((cand.graph.get("budgets") or {}).get("wall_seconds")
                        or (ex.profile.get("budgets") or {}).get("wall_seconds") or DEFAULT_WALL_SECONDS)
    config = PoolConfig(workers=n_workers, threads=threads, in_flight=total_in_flight,
                        task_timeout=wall_budget + hang_grace_seconds(wall_budget),
                        startup_timeout=float(os.environ.get("ARCHITECT_WORKER_STARTUP_SECONDS") or 180))
    if oracle:
        factory, factory_args = ORACLE_FACTORY, {"executor": ex.name}
    else:
        factory = GRAPH_FACTORY
        factory_args = {"graph": cand.graph, "candidate_dir": str(cand.directory)}
    by_index = {t["index"]: t for t in tasks}

    label = f"{'oracle' if oracle else cand.graph.get('name', 'candidate')} · {tier}"
    with progress_bar(label, len(specs), progress) as bar:
        for rec in records.values():
            bar.advance(rec["success"])

        def on_outcome(outcome) -> None:
            task = by_index[outcome.index]
            ep = task["episode"]
            if outcome.record is None:
                rec = episode_record(ep, None, infra_error=outcome.infra_error, attempts=outcome.attempts)
            else:
                log_rel = task["log_rel"] if task["log_path"] and Path(task["log_path"]).is_file() else None
                rec = episode_record(ep, outcome.record, attempts=outcome.attempts, log=log_rel)
                if cache is not None:
                    cache.put(ep, outcome.record, Path(task["log_path"]) if log_rel else None)
            records[outcome.index] = rec
            bar.advance(None if rec["infra_error"] else rec["success"])

        if tasks:
            run_pool(tasks, factory, factory_args, config, on_outcome)

    ordered = [records[i] for i in range(len(specs))]
    profile = ex.profile or {}
    primary_metric = profile.get("primary_metric") or "success_rate"
    secondary_metrics = list(profile.get("secondary_metrics") or ["steps", "reward"])
    metrics = {
        "schema_version": METRICS_SCHEMA_VERSION,
        "tier": tier,
        "executor": ex.name,
        "oracle": oracle,
        "candidate": {
            "path": str(cand.graph_path),
            "hash": cand.hash,
            "graph_hash": cand.graph_hash,
            "name": cand.graph.get("name"),
        },
        **summarize(ordered, primary_metric, secondary_metrics),
        "cached": sum(1 for r in ordered if r["cached"]),
        "workers": n_workers,
        "in_flight": total_in_flight,
        "threads_per_worker": threads,
        "wall_seconds": time.time() - started,
        "episode_budget": {"wall_seconds": wall_budget, "hang_timeout_seconds": config.task_timeout},
        "started_at": _dt.datetime.fromtimestamp(started, _dt.timezone.utc).isoformat(timespec="seconds"),
        "warnings": _warnings(cand),
        "graph": cand.graph,
        "episodes": ordered,
    }
    _check_schema(metrics)
    if out is not None:
        write_json_atomic(out / "metrics.json", metrics)
    return metrics


def _tier_episodes(ex, tier: str, limit: int | None) -> list[dict]:
    tiers = (ex.profile or {}).get("tiers") or {}
    if tiers and tier not in tiers:
        raise UserError(f"executor {ex.name!r} has no tier {tier!r} (tiers: {', '.join(sorted(tiers))})")
    try:
        specs = list(ex.episodes(tier))
    except (KeyError, ValueError) as exc:
        raise UserError(f"executor {ex.name!r}: cannot list episodes of tier {tier!r}: {exc}") from None
    if limit is not None:
        if limit < 1:
            raise UserError(f"--episodes must be at least 1 (got {limit})")
        specs = specs[:limit]
    if not specs:
        raise UserError(f"tier {tier!r} of executor {ex.name!r} has no episodes")
    ids = [str(s["episode_id"]) for s in specs]
    if len(set(ids)) != len(ids):
        raise UserError(f"tier {tier!r} of executor {ex.name!r} repeats an episode_id")
    return specs


def _select(specs: list[dict], only: list[str] | None, tier: str) -> list[dict]:
    if only is None:
        return specs
    by_id = {str(s["episode_id"]): s for s in specs}
    missing = [e for e in only if str(e) not in by_id]
    if missing:
        raise UserError(f"episode {missing[0]!r} is not in tier {tier!r}")
    if not only:
        raise UserError(f"no episodes selected from tier {tier!r}")
    return [by_id[str(e)] for e in only]


def _default_in_flight(cand: Candidate, workers: int) -> int:
    """The number of workers, or the pinned profile's concurrency for graphs
    that call a model (their episodes mostly wait on it)."""
    pinned = cand.graph.get("model_profile")
    if not pinned:
        return workers
    try:
        from harness.models import load_profile, resolve_profile_path

        profile = load_profile(resolve_profile_path(pinned["path"], cand.directory))
    except UserError as err:
        raise UserError(f"{cand.graph_path}: model profile: {err.message}") from None
    return max(workers, int(profile.concurrency or workers))


def _check_model_setup(cand: Candidate) -> None:
    """Refuse before any rollout when the pinned model cannot be reached as
    configured (no API key, no cassette to replay): the error names the profile
    and what is missing."""
    if not cand.graph.get("model_profile"):
        return
    from harness.models import client_for_graph

    try:
        client = client_for_graph(cand.graph, cand.directory)
    except UserError as err:
        raise UserError(f"{cand.graph_path}: model profile {cand.graph['model_profile'].get('name')!r}: "
                        f"{err.message}") from None
    client.close()


def _warnings(cand: Candidate) -> list[str]:
    run_cells = [name for name, spec in (cand.graph.get("state") or {}).items()
                 if isinstance(spec, dict) and spec.get("lifetime") == "run"]
    if run_cells:
        return [f"state cells with lifetime 'run' ({', '.join(sorted(run_cells))}) carry over between "
                "episodes of one runner, so results can depend on how episodes are spread over workers"]
    return []


def _check_schema(metrics: dict) -> None:
    from harness.schemas import validate_instance

    problems = validate_instance("metrics", metrics)
    if problems:
        raise RuntimeError("metrics.json would not match schemas/metrics.schema.json: " + "; ".join(problems[:5]))


def _safe(episode_id) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in str(episode_id))

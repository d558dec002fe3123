"""`evaluate(candidate, tier)`: roll a candidate out on a fixed tier of episodes."""

from __future__ import annotations

import datetime as _dt
import json
import os
import time
from pathlib import Path

from harness.canvas.budgets import episode_limits
from harness.errors import UserError
from harness.fileio import write_json_atomic
from harness.tier_groups import balanced_subset
from harness.evaluation.cache import ResultCache, code_fingerprint
from harness.evaluation.candidate import Candidate, load_candidate
from harness.evaluation.backends import choose_backend
from harness.evaluation.pool import PoolConfig
from harness.evaluation.progress import progress_bar
from harness.evaluation.records import episode_record, summarize
from harness.evaluation.schedule import EpisodeDurations, longest_first, makespan_report

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
             noise_seed: int = 0, reseed: int = 0, backend: str | None = None,
             ray_address: str | None = None, probes: dict | None = None, tiers: dict | None = None,
             warm_scope: str | None = None, label: str | None = None) -> dict:
    """Evaluate CANDIDATE (a graph.json or a folder holding one) on a tier; return
    the content of metrics.json (also written to `out_dir` when given).
    `only`: just these episode ids of the tier. `noise_seed`: the seed of a
    stochastic tier's noise (part of each episode and of the cache key).
    `reseed`: fresh episodes for reruns of a deterministic agent, draw number
    `reseed` (`fresh_episodes`). `backend`
    is "local" (worker processes) or "ray" (see harness.evaluation.backends).
    `probes` overrides the executor profile's probe switches (`logging_fault`,
    `reconcile_calls`). `tiers`: tiers beyond the executor profile's, by name (a run
    manifest's `tiers:`, an episode list file's, see harness.episode_lists). `warm_scope`: a run's
    folder, whose warm forkserver the local workers fork from (harness.evaluation.warm). `label`: what
    the progress lines call this evaluation (default: the candidate's name · tier)."""
    started = time.time()
    cand = load_candidate(Path(candidate))
    ex = cand.executor.with_tiers(tiers)
    specs = _episode_specs(ex, tier, episodes, only, reseed, noise_seed)
    stochastic = any(s.get("slip") for s in specs)
    probes = {**((ex.profile or {}).get("probes") or {}), **(probes or {})}
    _check_dependencies(ex)
    if not oracle:
        _check_model_setup(cand)
    preload = ex.spec.worker_modules + (() if oracle else _model_modules(cand))
    out = _fresh_out_dir(out_dir)

    runs_on = choose_backend(backend, ray_address, ex.profile)
    model_concurrency = _model_concurrency(cand)
    plan = runs_on.plan(workers, in_flight, model_concurrency)
    cache = (_result_cache(cand, tier, probes, noise_seed if stochastic else None)
             if use_cache and not oracle else None)
    records, tasks = _served_and_pending(specs, cache, out)

    wall_budget = _wall_budget(cand.graph, specs)
    config = PoolConfig(workers=plan.workers, threads=plan.threads, in_flight=plan.in_flight,
                        task_timeout=wall_budget + hang_grace_seconds(wall_budget),
                        startup_timeout=float(os.environ.get("ARCHITECT_WORKER_STARTUP_SECONDS") or 180),
                        preload=preload, warm_scope=warm_scope)
    factory, factory_args = _episode_factory(cand, oracle, probes, runs_on.client_concurrency(model_concurrency, plan))
    label = label or f"{'oracle' if oracle else cand.graph.get('name', 'candidate')} · {tier}"
    durations = EpisodeDurations(ex.name, durations_key(tier, oracle, cand.graph))
    expected = durations.load()
    order = "longest_expected_first" if any(t["episode"]["episode_id"] in expected for t in tasks) else "tier"
    spans, seconds = _run_pending(longest_first(tasks, expected), records, cache, runs_on, factory, factory_args,
                                  config, label, len(specs), progress, _counted(ex))
    durations.record(seconds)

    ordered = [records[i] for i in range(len(specs))]
    metrics = _metrics_document(cand, tier, oracle, ordered, runs_on.name, plan, config, wall_budget, started)
    metrics["schedule"] = makespan_report(spans, plan.in_flight, order)
    _check_schema(metrics)
    if out is not None:
        write_json_atomic(out / "metrics.json", metrics)
    return metrics


def durations_key(tier: str, oracle: bool, graph: dict) -> str:
    """Whose recorded episode durations predict this evaluation's: the oracle's own, and those
    of graphs that call a model (their episodes' lengths follow their model calls) apart
    from those of graphs that do not (theirs follow the simulator's steps)."""
    if oracle:
        return f"{tier}-oracle"
    return f"{tier}-model" if graph.get("model_profile") else tier


def _counted(ex) -> str:
    """What the progress lines count: the primary metric when it is the episode's success itself
    (EQA's accuracy), else success."""
    from harness.evaluation.records import SUCCESS_NAMES

    primary = (ex.profile or {}).get("primary_metric") or ex.spec.primary_metric
    return primary if primary in SUCCESS_NAMES else "success"


def _wall_budget(graph: dict, specs: list[dict]) -> float:
    """The longest wall-clock limit the runtime enforces on any of the episodes (what a worker's
    hang timeout is measured from); DEFAULT_WALL_SECONDS when nothing limits them."""
    budgets = graph.get("budgets") or {}
    return max(float(episode_limits(budgets, s).get("wall_seconds", DEFAULT_WALL_SECONDS)) for s in specs)


def _episode_specs(ex, tier: str, limit: int | None, only: list[str] | None, reseed: int,
                   noise_seed: int) -> list[dict]:
    """The tier's episodes to run: limited, selected, reseeded, with the noise seed of a stochastic tier."""
    specs = _select(_tier_episodes(ex, tier, limit), only, tier)
    if reseed:
        specs = fresh_episodes(ex, tier, specs, reseed)
    if any(s.get("slip") for s in specs):
        specs = [dict(s, noise_seed=int(noise_seed)) for s in specs]
    return specs


def fresh_unavailable(ex, tier: str, limit: int | None = None, draws: tuple[int, ...] = (1,)) -> str | None:
    """Why `fresh_episodes` cannot draw fresh episodes for the first `limit` episodes of this
    tier with each of `draws` (the executor's message: no seed, too few unused episodes, data
    missing), or None when it can."""
    specs = _tier_episodes(ex, tier, limit)
    for draw in draws:
        try:
            fresh_episodes(ex, tier, specs, draw)
        except UserError as exc:
            return exc.message
    return None


def fresh_episodes(ex, tier: str, specs: list[dict], draw: int) -> list[dict]:
    """Episodes like `specs` that no tier holds: the executor's `fresh_episodes`, else each
    episode's seed shifted by `draw` (its id marked `~seed+<draw>`)."""
    if ex.spec.fresh_episodes is not None:
        from harness.plugins import load_ref

        used = [e for name in ex.profile["tiers"] for e in ex.episodes(name)]
        return load_ref(ex.spec.fresh_episodes)(specs, draw, used)
    if not all("seed" in s for s in specs):
        raise UserError(f"tier {tier!r} of executor {ex.name!r}: episodes have no seed to draw fresh ones from")
    return [dict(s, seed=int(s["seed"]) + draw, episode_id=f"{s['episode_id']}~seed+{draw}") for s in specs]


def _fresh_out_dir(out_dir) -> Path | None:
    """The output folder with an empty `episodes/` (logs of an earlier evaluation into it removed)."""
    if out_dir is None:
        return None
    out = Path(out_dir)
    (out / "episodes").mkdir(parents=True, exist_ok=True)
    for stale in (out / "episodes").glob("*.jsonl"):
        stale.unlink()
    return out


def _result_cache(cand, tier: str, probes: dict, noise_seed: int | None) -> ResultCache:
    """The cache keyed on the candidate, the tier (and noise seed), the executor's code,
    the model setup and any probe switches."""
    from harness.models import model_fingerprint

    code = code_fingerprint(cand.executor.package_dir) + model_fingerprint(cand.graph, cand.directory)
    if any(probes.values()):
        code += json.dumps({"probes": probes}, sort_keys=True)
    return ResultCache(cand.hash, tier if noise_seed is None else f"{tier}~noise{noise_seed}", code=code)


def _served_and_pending(specs: list[dict], cache, out: Path | None) -> tuple[dict[int, dict], list[dict]]:
    """Records the cache already holds (by episode index), and the tasks left to run."""
    records: dict[int, dict] = {}
    tasks = []
    for index, ep in enumerate(specs):
        log_rel = None if out is None else f"episodes/{_safe(ep['episode_id'])}.jsonl"
        log_abs = str(out / log_rel) if log_rel else None
        hit = cache.get(ep, Path(log_abs) if log_abs else None) if cache else None
        if hit is not None:
            records[index] = episode_record(ep, hit, cached=True, log=log_rel)
            continue
        tasks.append({"index": index, "episode": ep, "log_path": log_abs, "log_rel": log_rel})
    return records, tasks


def _episode_factory(cand, oracle: bool, probes: dict, model_concurrency_share: int | None) -> tuple[str, dict]:
    """What each worker builds to run episodes: the oracle, or the candidate's graph runner."""
    if oracle:
        return ORACLE_FACTORY, {"executor": cand.executor.name}
    args = {"graph": cand.graph, "candidate_dir": str(cand.directory), "probes": probes}
    if model_concurrency_share is not None:
        args["model_concurrency"] = model_concurrency_share
    return GRAPH_FACTORY, args


def _run_pending(tasks: list[dict], records: dict[int, dict], cache, runs_on, factory, factory_args, config,
                 label: str, total: int, progress: bool,
                 counted: str = "success") -> tuple[list[tuple[float, float]], dict[str, float]]:
    """Run the pending tasks on the backend, in their order, filling `records` and the cache as
    outcomes arrive; each finished episode's (start, end) span on this process's clock, and its
    seconds by episode id."""
    by_index = {t["index"]: t for t in tasks}
    spans: list[tuple[float, float]] = []
    seconds: dict[str, float] = {}
    with progress_bar(label, total, progress, counted) as bar:
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
                end = time.monotonic()
                spans.append((end - rec["wall_seconds"], end))
                seconds[ep["episode_id"]] = rec["wall_seconds"]
                if cache is not None:
                    cache.put(ep, outcome.record, Path(task["log_path"]) if log_rel else None)
            records[outcome.index] = rec
            bar.advance(None if rec["infra_error"] else rec["success"])

        if tasks:
            runs_on.run(tasks, factory, factory_args, config, on_outcome)
    return spans, seconds


def _metrics_document(cand, tier: str, oracle: bool, ordered: list[dict], backend_name: str, plan, config,
                      wall_budget: float, started: float) -> dict:
    """The content of metrics.json (schemas/metrics.schema.json)."""
    profile = cand.executor.profile or {}
    primary_metric = profile.get("primary_metric") or "success_rate"
    secondary_metrics = list(profile.get("secondary_metrics") or ["steps", "reward"])
    return {
        "schema_version": METRICS_SCHEMA_VERSION,
        "tier": tier,
        "executor": cand.executor.name,
        "oracle": oracle,
        "candidate": {
            "path": str(cand.graph_path),
            "hash": cand.hash,
            "graph_hash": cand.graph_hash,
            "name": cand.graph.get("name"),
        },
        **summarize(ordered, primary_metric, secondary_metrics),
        "cached": sum(1 for r in ordered if r["cached"]),
        "backend": backend_name,
        "workers": plan.workers,
        "in_flight": plan.in_flight,
        "threads_per_worker": plan.threads,
        "wall_seconds": time.time() - started,
        "episode_budget": {"wall_seconds": wall_budget, "hang_timeout_seconds": config.task_timeout},
        "started_at": _dt.datetime.fromtimestamp(started, _dt.timezone.utc).isoformat(timespec="seconds"),
        "warnings": _warnings(cand),
        "graph": cand.graph,
        "episodes": ordered,
    }


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
        specs = balanced_subset(specs, limit, ex.spec.level_key)
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


def _pinned_profile(cand: Candidate):
    """The graph's pinned inference profile, None when it pins none."""
    pinned = cand.graph.get("model_profile")
    if not pinned:
        return None
    try:
        from harness.models import load_profile, resolve_profile_path

        return load_profile(resolve_profile_path(pinned["path"], cand.directory))
    except UserError as err:
        raise UserError(f"{cand.graph_path}: model profile: {err.message}") from None


def _model_concurrency(cand: Candidate) -> int | None:
    """The pinned inference profile's concurrency, None for graphs that call no
    model. Such graphs' episodes mostly wait on the model, so by default this
    many run at once."""
    profile = _pinned_profile(cand)
    return int(profile.concurrency) if profile and profile.concurrency else None


def _model_modules(cand: Candidate) -> tuple[str, ...]:
    """The live backend module of the pinned profile, for the workers' preload: its SDK
    (openai, anthropic) takes longer to import than the rest of a worker."""
    from harness.models.client import BACKEND_MODULES

    profile = _pinned_profile(cand)
    return (BACKEND_MODULES[profile.backend],) if profile and profile.backend in BACKEND_MODULES else ()


def _check_dependencies(ex) -> None:
    """Refuse before any rollout when a module every rollout of the executor needs is
    missing, naming it and how to install it."""
    missing = ex.spec.missing_requirements()
    if missing:
        how = f"; install with: {ex.spec.install}" if ex.spec.install else ""
        raise UserError(f"executor {ex.name!r} needs {', '.join(missing)}, which is not installed{how}")


def _check_model_setup(cand: Candidate) -> None:
    """Refuse before any rollout when the pinned model cannot be reached as
    configured (no API key, no cassette to replay): the error names the profile
    and what is missing."""
    if not cand.graph.get("model_profile"):
        return
    from harness.models import check_graph_setup

    try:
        check_graph_setup(cand.graph, cand.directory)
    except UserError as err:
        raise UserError(f"{cand.graph_path}: model profile {cand.graph['model_profile'].get('name')!r}: "
                        f"{err.message}") from None


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

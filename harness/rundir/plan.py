"""What one iteration will cost before anything runs (`--dry-run`), and the
provenance a run records in its manifest.

The dry-run figures are upper bounds: every episode may use its graph's
`model_calls` and `tokens` and all the wall time the runtime allows it
(harness.canvas.budgets); the cost prices those tokens with the pinned
inference profile (output price, the higher one). Episodes served from the
result cache cost nothing. Where the result cache holds episodes this
candidate ran before, their mean wall time gives a realistic estimate beside
the bound (`measured`), labelled as such.

Times follow how the run evaluates: each evaluation (a tier's smoke or
performance run, one rerun draw, one holdout run) runs as many episodes at once
as `evaluate` plans for it on the local backend (`at_once`: the workers the run
asks for, one for a handful of episodes, else one per core; the pinned
inference profile's concurrency for graphs that call a model; never more than
the evaluation's episodes), so its time is its episodes' time over that."""

from __future__ import annotations

import json
import platform
from importlib import metadata
from pathlib import Path

from harness.canvas.budgets import episode_limits
from harness.errors import UserError
from harness.tier_groups import capped_tier_episodes

# Distributions whose versions decide what a run's results mean.
PROVENANCE_PACKAGES = ("architect", "numpy", "scipy", "jsonschema", "minigrid", "gymnasium", "anthropic", "openai",
                       "robosuite", "mujoco", "ray")


def provenance(spec) -> dict:
    """Package versions, Python, and the executor's own provenance (simulator
    backend, data checksums: its spec's `provenance` hook), else its data status."""
    packages = {}
    for name in PROVENANCE_PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    executor: dict = {"name": spec.name}
    if spec.data:
        executor["data_present"] = spec.data_status()
    if spec.provenance:
        from harness.executor_api import load_ref

        try:
            executor.update(load_ref(spec.provenance)())
        except Exception as exc:  # recorded, not fatal: provenance describes, it does not gate
            executor["provenance_error"] = f"{type(exc).__name__}: {exc}"
    return {"packages": packages, "python": platform.python_version(), "platform": platform.platform(terse=True),
            "executor": executor}


def at_once(graph_dir: Path, cap: int | None, episodes: int) -> int:
    """How many episodes one evaluation of `episodes` episodes (the run's cap on them: `cap`) runs at
    once, as `evaluate` plans it on the local backend: the workers the run asks for
    (harness.rundir.tiers.evaluation_workers), the pinned inference profile's concurrency in flight
    for a graph that calls a model; at most `episodes`."""
    from harness.evaluation.backends import LocalBackend
    from harness.rundir.tiers import evaluation_workers

    graph = json.loads((graph_dir / "graph.json").read_text(encoding="utf-8"))
    profile = _pinned_profile(graph, graph_dir)
    concurrency = int(profile.concurrency) if profile is not None and profile.concurrency else None
    plan = LocalBackend().plan(evaluation_workers(cap), None, concurrency)
    return max(1, min(plan.in_flight, episodes))


def budget_bounds(graph_dir: Path, evaluations: list[tuple[list[dict], int, int]]) -> dict:
    """Upper bounds from the graph's budgets over evaluations, each (its episodes, times it runs,
    episodes at once): episodes, model calls, tokens, their cost, and the wall seconds (every episode
    may use all of them; each evaluation's sum over the episodes it runs at once)."""
    graph = json.loads((graph_dir / "graph.json").read_text(encoding="utf-8"))
    budgets = graph.get("budgets") or {}
    n = sum(len(episodes) * times for episodes, times, _ in evaluations)
    calls = int(budgets.get("model_calls") or 0)
    tokens = int(budgets.get("tokens") or 0)
    price = _price_per_token(graph, graph_dir)
    wall = sum(times * sum(float(episode_limits(budgets, e).get("wall_seconds", 0)) for e in episodes) / slots
               for episodes, times, slots in evaluations)
    return {
        "episodes": n,
        "model_calls_max": calls * n,
        "tokens_max": tokens * n,
        "cost_usd_max": round(tokens * n * price, 4) if price is not None else None,
        "cost_note": ("no model calls" if not calls else
                      "priced with the pinned inference profile's output price" if price is not None else
                      "no price: the graph pins no readable inference profile"),
        "wall_seconds": round(wall, 1),
    }


IDS_SHOWN = 5  # a tier's first episode ids in the plan: `episode_ids`, `episode_ids_shown` of its `episodes`


def iteration_plan(graph_dir: Path, executor, *, smoke_tier: str, performance_tier: str,
                   smoke_episodes: int | None, eval_episodes: int | None) -> dict:
    """Episodes, model calls, estimated cost and time of one iteration (smoke + performance tier).
    Each tier gives its episode count (`episodes`), its first IDS_SHOWN ids (`episode_ids`, all of
    them when it has no more; `episode_ids_shown` says how many: the list holds ids only) and the
    episodes it runs at once (`workers`, see `at_once`)."""
    tiers = {}
    evaluations = []
    for kind, tier, cap in (("smoke", smoke_tier, smoke_episodes), ("performance", performance_tier, eval_episodes)):
        episodes = capped_tier_episodes(executor, tier, cap)
        slots = at_once(graph_dir, cap, len(episodes))
        evaluations.append((episodes, 1, slots))
        shown = [e["episode_id"] for e in episodes[:IDS_SHOWN]]
        tiers[kind] = {"tier": tier, "episodes": len(episodes), "episode_ids": shown, "episode_ids_shown": len(shown),
                       "workers": slots}
    bounds = budget_bounds(graph_dir, evaluations)
    measured = measured_time(graph_dir, (performance_tier, smoke_tier), [(len(e), s) for e, _, s in evaluations])
    unmeasured = None if measured else (
        f"no episode of this candidate is cached yet, so the time above is only the budgets' bound: "
        f"`architect experiment run {graph_dir} --tier {smoke_tier} --json` runs its {tiers['smoke']['episodes']} "
        f"smoke episodes (the run reuses them), and this dry run then estimates the time from them")
    return {
        "measured": measured,
        "unmeasured": unmeasured,
        "tiers": tiers,
        "episodes": bounds["episodes"],
        "model_calls_max": bounds["model_calls_max"],
        "tokens_max": bounds["tokens_max"],
        "cost_usd_max": bounds["cost_usd_max"],
        "cost_note": bounds["cost_note"],
        "wall_seconds_max": bounds["wall_seconds"],
        "workers": tiers["performance"]["workers"],
        "note": "upper bounds from the graph's budgets (every episode may use all of them); cached episodes cost "
                "nothing; each tier's episodes run `workers` at once, as the run evaluates them",
    }


def measured_time(candidate_dir: Path, tiers: tuple[str, ...], evaluations: list[tuple[int, int]]) -> dict | None:
    """The estimate from this candidate's cached episode times (the first of `tiers` the cache
    holds) for `evaluations`, each (episodes, episodes at once), or None when the cache holds none."""
    import statistics

    from harness.evaluation.cache import measured_seconds
    from harness.rundir.tiers import content_hash

    digest = content_hash(candidate_dir)
    for tier in tiers:
        seconds = measured_seconds(digest, tier)
        if seconds:
            per_episode = statistics.fmean(seconds)  # (a total is n times the mean; episodes' times are skewed)
            return {"seconds_per_episode": round(per_episode, 3), "from_episodes": len(seconds), "tier": tier,
                    "wall_seconds_estimate": round(estimate_seconds(per_episode, evaluations), 1),
                    "note": f"estimate: the mean wall time of {len(seconds)} cached episodes of this candidate "
                            f"on tier {tier} (measured when they ran, under that load), times each evaluation's "
                            "episodes, over the episodes it runs at once"}
    return None


def estimate_seconds(per_episode: float, evaluations: list[tuple[int, int]]) -> float:
    """Wall seconds of evaluations, each (episodes, episodes at once), at `per_episode` seconds each."""
    return sum(per_episode * n / max(1, slots) for n, slots in evaluations)


def certification_plan(executor, graph_dir: Path, *, rerun_tier: str, rerun_cap: int | None,
                       holdout_tier: str | None, measured: dict | None, reruns: int = 3) -> dict:
    """Episodes `certify` runs by default (`--episodes auto`): iteration 0 and the best, `reruns` times
    on the rerun tier (the performance tier's episode cap applies; when the first two reruns show both
    agents deterministic, `reruns` more on fresh episodes instead: `episodes_max`), then both on the
    whole sealed holdout; half of it when the best is iteration 0 itself (it runs once). With a
    measured episode time, the estimate it gives, each evaluation on the episodes `graph_dir`'s
    candidate runs at once (`at_once`)."""
    rerun = len(capped_tier_episodes(executor, rerun_tier, rerun_cap))
    holdout = len(executor.episodes(holdout_tier)) if holdout_tier else 0
    from harness.evaluation.evaluator import fresh_unavailable
    from harness.rundir.certify import PROBE_DRAWS, rerun_draws

    draws, draws_max = rerun_draws(reruns, "auto")
    episodes = 2 * draws * rerun + 2 * holdout
    no_fresh = fresh_unavailable(executor, rerun_tier, rerun_cap)
    if no_fresh is None:
        most = 2 * draws_max * rerun + 2 * holdout
        deterministic = (f"when the first two reruns are identical for both (deterministic agents), {reruns} reruns "
                         f"on fresh episodes follow them: {most} episodes in all (episodes_max)")
    else:
        most = episodes  # (at least the probe's)
        probe = 2 * PROBE_DRAWS * rerun + 2 * holdout
        deterministic = (f"when the first two reruns are identical for both (deterministic agents), certify stops "
                         f"after those two, as tier {rerun_tier!r} has no fresh episodes ({no_fresh}): {probe} "
                         "episodes in all")
    plan = {"reruns": reruns, "rerun_tier": rerun_tier, "rerun_episodes": rerun, "holdout_tier": holdout_tier,
            "holdout_episodes": holdout, "episodes": episodes, "episodes_max": most,
            "note": f"`episodes`: {reruns} reruns of each on tier {rerun_tier!r}, then each on the holdout; "
                    f"{deterministic}; when the best is iteration 0 itself, it runs once: half of these; "
                    "--reruns, --rerun-episodes and --holdout-episodes make it smaller"}
    if measured:
        evaluations = [(rerun, at_once(graph_dir, rerun_cap, rerun))] * (2 * draws)
        if holdout:
            evaluations += [(holdout, at_once(graph_dir, None, holdout))] * 2
        plan["wall_seconds_estimate"] = round(estimate_seconds(measured["seconds_per_episode"], evaluations), 1)
    return plan


def _pinned_path(graph: dict) -> str | None:
    """The path of the inference profile the graph pins, or None when it pins none."""
    pinned = graph.get("model_profile")
    return pinned["path"] if isinstance(pinned, dict) and pinned.get("path") else None


def _pinned_profile(graph: dict, graph_dir: Path):
    """The graph's pinned inference profile; None when it pins none or it cannot be read."""
    path = _pinned_path(graph)
    if path is None:
        return None
    from harness.models.profile import load_profile, resolve_profile_path

    try:
        return load_profile(resolve_profile_path(path, graph_dir))
    except (UserError, OSError):
        return None


def _price_per_token(graph: dict, graph_dir: Path) -> float | None:
    if _pinned_path(graph) is None:
        return 0.0
    profile = _pinned_profile(graph, graph_dir)
    if profile is None:
        return None
    return max(profile.price_input_per_mtok, profile.price_output_per_mtok) / 1e6


def _ids_text(tier: dict) -> str:
    """'a, b, c' or 'a, b, c and 17 more' (the ids a plan shows, and how many it leaves out)."""
    ids = tier.get("episode_ids") or []
    more = tier["episodes"] - len(ids)
    return ", ".join(ids) + (f" and {more} more" if more > 0 else "")


def render(plan: dict) -> str:
    tiers = "; ".join(f"{k}: {t['episodes']} episodes of tier {t['tier']} ({_ids_text(t)})"
                      for k, t in plan["tiers"].items())
    cost = f"${plan['cost_usd_max']:.4f}" if plan["cost_usd_max"] is not None else "unknown"
    run = ""
    if "performance_tier" in plan:
        run = (f"run: {plan['variant']} on {plan['seed_candidate']} ({plan['executor']}), searching tier "
               f"{plan['performance_tier']}, certified on the sealed tier {plan['holdout_tier'] or '(none)'}, "
               f"at most {plan['max_iterations']} iteration(s) after iteration 0\n")
        run += "distinct episodes: " + "; ".join(
            f"{t} {a['distinct']} of {a['episodes']} (by {a['by']}"
            + (f"; content unavailable: {a['content_unavailable']}" if a.get("content_unavailable") else "") + ")"
            for t, a in plan.get("distinct_episodes", {}).items()) + "\n"
        run += "".join(f"warning: {w}\n" for w in plan.get("warnings") or [])
        if plan.get("eval_subset"):
            run += f"{plan['performance_tier']}: {plan['eval_subset']}\n"
    return (f"{run}one iteration: {tiers}\n"
            f"model calls: at most {plan['model_calls_max']}; tokens: at most {plan['tokens_max']}; "
            f"cost: at most {cost} ({plan['cost_note']})\n"
            f"time: at most {plan['wall_seconds_max']} s ("
            + ", ".join(f"{k} {t['workers']} at once" for k, t in plan["tiers"].items() if "workers" in t)
            + f")\n({plan['note']})"
            + (f"\ntime, measured: about {plan['measured']['wall_seconds_estimate']} s ({plan['measured']['note']})"
               if plan.get("measured") else f"\ntime, measured: {plan['unmeasured']}" if plan.get("unmeasured") else "")
            + (f"\ncertification: {c['episodes']} episodes ({c['reruns']} reruns x 2 of {c['rerun_episodes']} on "
               f"{c['rerun_tier']}, 2 x {c['holdout_episodes']} on the holdout {c['holdout_tier']}"
               + (f"; about {c['wall_seconds_estimate']} s by the measured time" if "wall_seconds_estimate" in c else "")
               + f"; {c['note']})" if (c := plan.get("certification")) else ""))

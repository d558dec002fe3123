"""`architect certify --dry-run`: what certification would run on a run, and what it
would cost, before anything runs.

The figures are computed as `init --dry-run` computes them (harness.rundir.plan):
upper bounds from each candidate's graph budgets (model calls, tokens, wall
time per episode), priced with its pinned inference profile, and beside them
an estimate from the candidate's cached episode times when the cache holds
some. Rerun draws: `--episodes fresh` runs `reruns`; `tier` runs at least two
(they show whether the agents are deterministic); `auto` runs those and, when
the agents prove deterministic and fresh episodes can be drawn, `reruns` more
on fresh episodes (`draws_max`). When the best is iteration 0 itself
(`best_is_baseline`), certify reruns and evaluates it once, so it is counted
once (`candidates` holds only the baseline). Each evaluation (one rerun draw,
one holdout run) counts its episodes over those it runs at once, as certify
runs them (`at_once`: one worker for a capped handful, else one per core; a
graph calling a model keeps its profile's concurrency in flight)."""

from __future__ import annotations

from harness.errors import UserError
from harness.rundir import ledger
from harness.rundir.run import Run


def certify_plan(run: Run, *, reruns: int, holdout_episodes: int | None, episodes: str) -> dict:
    from harness.rundir.certify import holdout_tier, rerun_draws
    from harness.rundir.plan import at_once, budget_bounds, measured_time
    from harness.tier_groups import capped_tier_episodes

    best_row = ledger.best_row(ledger.read_rows(run.paths.ledger))
    if best_row is None:
        raise UserError(f"run {run.paths.run_id} has no committed iteration to certify")
    best = best_row["iteration"]
    executor = run.executor()
    rerun_tier, cap = run.tier("rerun")
    rerun_specs = capped_tier_episodes(executor, rerun_tier, cap)
    holdout = holdout_tier(run)
    holdout_specs = capped_tier_episodes(executor, holdout, holdout_episodes)
    draws, draws_max = rerun_draws(reruns, episodes)
    per_candidate, measured = {}, {}
    candidates = (("baseline", 0),) + ((("best", best),) if best != 0 else ())  # best 0: iteration 0's runs
    for label, iteration in candidates:
        folder = run.paths.iteration(iteration) / "candidate"
        at_once_reruns = at_once(folder, cap, len(rerun_specs))
        at_once_holdout = at_once(folder, holdout_episodes, len(holdout_specs))
        evaluations = [(rerun_specs, draws_max, at_once_reruns), (holdout_specs, 1, at_once_holdout)]
        cost = budget_bounds(folder, evaluations)
        per_candidate[label] = dict(cost, iteration=iteration,
                                    workers={"reruns": at_once_reruns, "holdout": at_once_holdout})
        estimate = measured_time(folder, (rerun_tier, run.manifest["profiles"]["performance_tier"]),
                                 [(len(rerun_specs), at_once_reruns)] * draws_max
                                 + [(len(holdout_specs), at_once_holdout)])
        if estimate is not None:
            measured[label] = estimate
    total = {key: sum(c[key] for c in per_candidate.values())
             for key in ("episodes", "model_calls_max", "tokens_max", "wall_seconds")}
    costs = [c["cost_usd_max"] for c in per_candidate.values()]
    plan = {
        "best": best, "best_is_baseline": best == 0, "episode_mode": episodes,
        "reruns": {"tier": rerun_tier, "episodes": len(rerun_specs), "times": reruns, "draws": draws,
                   "draws_max": draws_max, "draws_rule": _draws_rule(episodes, reruns, draws, draws_max),
                   "tier_rule": "the executor profile's rerun_tier, else the run's performance tier; "
                                "--rerun-episodes, else the run's --eval-episodes cap, applies"},
        "holdout": {"tier": holdout, "episodes": len(holdout_specs)},
        "episodes_max": total["episodes"], "model_calls_max": total["model_calls_max"],
        "tokens_max": total["tokens_max"],
        "cost_usd_max": None if None in costs else round(sum(costs), 4),
        "wall_seconds_max": round(total["wall_seconds"], 1),
        "candidates": per_candidate,
        "note": "upper bounds from the graphs' budgets (every episode may use all of them), with the most rerun "
                "draws the episode mode can run; each evaluation's episodes run `workers` at once, as certify "
                "runs them",
    }
    if len(measured) == len(per_candidate):
        plan["measured"] = {"wall_seconds_estimate": round(sum(m["wall_seconds_estimate"] for m in measured.values()), 1),
                            "note": "the mean wall time of each candidate's cached episodes, times each evaluation's "
                                    "episodes (with the most rerun draws), over the episodes it runs at once"}
    return plan


def _draws_rule(mode: str, reruns: int, draws: int, draws_max: int) -> str:
    """Why each candidate is rerun `draws` (to `draws_max`) times under this episode mode."""
    from harness.rundir.certify import PROBE_DRAWS

    def n(k: int) -> str:
        return f"{k} draw" + ("s" if k != 1 else "")

    if mode == "fresh":
        return f"--episodes fresh: {n(reruns)} on fresh episodes"
    kept = f", the first {reruns} reported" if draws > reruns else ""
    if mode == "tier":
        return f"--episodes tier: {n(draws)} of the tier's episodes (at least {PROBE_DRAWS}{kept})"
    return (f"--episodes auto: {n(PROBE_DRAWS)} of the tier's episodes first (the determinism probe); when both "
            f"agents repeat themselves there, the report takes {n(reruns)} on fresh episodes instead ({draws_max} in all, the "
            f"probe's kept apart), otherwise {n(draws)} of the tier's episodes in all{kept}")


def render(plan: dict) -> str:
    r, h = plan["reruns"], plan["holdout"]
    cost = f"${plan['cost_usd_max']:.4f}" if plan["cost_usd_max"] is not None else "unknown (no readable profile)"
    workers = plan["candidates"]["baseline"]["workers"]
    if plan.get("best_is_baseline"):
        head = ("certification of iteration 0, which is also the best (no later iteration was selected over it): "
                "it is rerun and evaluated on the holdout once and compared with itself (Δ 0 by construction), "
                "so the figures below count it once")
    else:
        head = f"certification of iteration 0 and the best (iteration {plan['best']})"
    lines = [
        f"{head}; episodes {plan['episode_mode']}:",
        f"reruns: {r['draws']}" + (f" to {r['draws_max']}" if r["draws_max"] != r["draws"] else "")
        + f" x {r['episodes']} episodes of tier {r['tier']} each ({r['tier_rule']}), {workers['reruns']} at once; "
        + r["draws_rule"],
        f"holdout: {h['episodes']} episodes of the sealed tier {h['tier']} each, {workers['holdout']} at once",
        f"at most {plan['episodes_max']} episodes, {plan['model_calls_max']} model calls, {plan['tokens_max']} "
        f"tokens, cost {cost}, {plan['wall_seconds_max']} s ({plan['note']})",
    ]
    if plan.get("measured"):
        lines.append(f"time, measured: about {plan['measured']['wall_seconds_estimate']} s ({plan['measured']['note']})")
    return "\n".join(lines)

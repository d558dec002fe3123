"""`architect certify --dry-run`: what certification would run on a run, and what it
would cost, before anything runs.

The figures are computed as `init --dry-run` computes them (harness.rundir.plan):
upper bounds from each candidate's graph budgets (model calls, tokens, wall
time per episode), priced with its pinned inference profile, and beside them
an estimate from the candidate's cached episode times when the cache holds
some. Rerun draws: `--episodes fresh` runs `reruns`; `tier` runs at least two
(they show whether the agents are deterministic); `auto` runs those and, when
the agents prove deterministic and fresh episodes can be drawn, `reruns` more
on fresh episodes (`draws_max`)."""

from __future__ import annotations

import os

from harness.errors import UserError
from harness.rundir import ledger
from harness.rundir.run import Run


def certify_plan(run: Run, *, reruns: int, holdout_episodes: int | None, episodes: str) -> dict:
    from harness.rundir.certify import holdout_tier, rerun_draws
    from harness.rundir.plan import budget_bounds, measured_time
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
    workers = max(1, os.cpu_count() or 1)
    per_candidate, measured = {}, {}
    for label, iteration in (("baseline", 0), ("best", best)):
        rerun_times = draws_max if label == "baseline" or best != 0 else 0  # best == 0: its reruns are iteration 0's
        folder = run.paths.iteration(iteration) / "candidate"
        cost = budget_bounds(folder, [(e, rerun_times) for e in rerun_specs] + [(e, 1) for e in holdout_specs])
        per_candidate[label] = dict(cost, iteration=iteration, wall_seconds=round(cost["wall_seconds"] / workers, 1))
        estimate = measured_time(folder, (rerun_tier, run.manifest["profiles"]["performance_tier"]),
                                 cost["episodes"], workers)
        if estimate is not None:
            measured[label] = estimate
    total = {key: sum(c[key] for c in per_candidate.values())
             for key in ("episodes", "model_calls_max", "tokens_max", "wall_seconds")}
    costs = [c["cost_usd_max"] for c in per_candidate.values()]
    plan = {
        "best": best, "episode_mode": episodes,
        "reruns": {"tier": rerun_tier, "episodes": len(rerun_specs), "times": reruns, "draws": draws,
                   "draws_max": draws_max,
                   "tier_rule": "the executor profile's rerun_tier, else the run's performance tier; "
                                "the run's --eval-episodes cap applies"},
        "holdout": {"tier": holdout, "episodes": len(holdout_specs)},
        "episodes_max": total["episodes"], "model_calls_max": total["model_calls_max"],
        "tokens_max": total["tokens_max"],
        "cost_usd_max": None if None in costs else round(sum(costs), 4),
        "wall_seconds_max": round(total["wall_seconds"], 1), "workers": workers,  # (each candidate's, on the workers)
        "candidates": per_candidate,
        "note": "upper bounds from the graphs' budgets (every episode may use all of them), with the most rerun "
                "draws the episode mode can run",
    }
    if len(measured) == len(per_candidate):
        plan["measured"] = {"wall_seconds_estimate": round(sum(m["wall_seconds_estimate"] for m in measured.values()), 1),
                            "note": "the mean wall time of each candidate's cached episodes, times its episodes, "
                                    "over the workers"}
    return plan


def render(plan: dict) -> str:
    r, h = plan["reruns"], plan["holdout"]
    cost = f"${plan['cost_usd_max']:.4f}" if plan["cost_usd_max"] is not None else "unknown (no readable profile)"
    lines = [
        f"certification of iteration 0 and the best (iteration {plan['best']}), episodes {plan['episode_mode']}:",
        f"reruns: {r['draws']}" + (f" to {r['draws_max']}" if r["draws_max"] != r["draws"] else "")
        + f" x {r['episodes']} episodes of tier {r['tier']} each ({r['tier_rule']})",
        f"holdout: {h['episodes']} episodes of the sealed tier {h['tier']} each",
        f"at most {plan['episodes_max']} episodes, {plan['model_calls_max']} model calls, {plan['tokens_max']} "
        f"tokens, cost {cost}, {plan['wall_seconds_max']} s on {plan['workers']} worker(s) ({plan['note']})",
    ]
    if plan.get("measured"):
        lines.append(f"time, measured: about {plan['measured']['wall_seconds_estimate']} s ({plan['measured']['note']})")
    return "\n".join(lines)

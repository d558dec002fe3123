"""Certification at the end of a run (study, E.4).

The baseline (iteration 0) and the selected best are each re-evaluated
`reruns` times on the run's rerun tier (the profile's `rerun_tier`, e.g. LIBERO's
`protocol`, else the performance tier), without the cache
(mean ± sd, Δ); then both are evaluated on the sealed holdout tier and compared
with the paired test (the best on the search tier is biased upward: the
winner's curse). When the best is the baseline itself (no later iteration was
selected over iteration 0), iteration 0 is rerun and evaluated on the holdout
once and compared with itself (Δ 0, by construction); the record says so
(`best_is_baseline`). Deterministic agents give identical reruns on the same
episodes: by default (`episodes="auto"`) two reruns detect that, and the
reported reruns then run on fresh episodes (the executor's `fresh_episodes`,
e.g. R2R: unused instructions of the same split; seeded executors: shifted
seeds), which the record says; when the executor cannot draw them, the record's
note says why.
Stochastic tiers rerun under fresh noise seeds.

The result, `certification.json` at the run's root, is committed. It holds
holdout figures, so no proposer may read it: the skills never open it, the
project settings deny reading it, and no variant helper reads it (a resumed
run proposes from the ledger, iterations and memory only). It holds no holdout
episode ids.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from harness.errors import UserError
from harness.evaluation.compare import compare_evaluations
from harness.rundir import gitops, ledger
from harness.rundir.evidence import best_view
from harness.rundir.records import now_iso, write_record
from harness.rundir.run import Run

CERTIFICATION = "certification.json"
TRAILER = "Architect-Certification"
FRESH_SEED_STRIDE = 10_000_000   # far from every tier's seeds


def _workers(episodes: int | None) -> int | None:
    from harness.rundir.tiers import evaluation_workers

    return evaluation_workers(episodes)


def holdout_tier(run: Run) -> str:
    """The sealed tier matching the performance tier, as the manifest records it
    (runs made before it did: `tiers.search_tiers` now)."""
    profiles = run.manifest["profiles"]
    if "holdout_tier" in profiles:
        name = profiles["holdout_tier"]
    else:
        from harness.executor_api import load_executor
        from harness.rundir.tiers import search_tiers

        name = search_tiers(load_executor(run.manifest["executor"]), profiles["performance_tier"])[1]
    if name is None:
        raise UserError(f"executor {run.manifest['executor']!r} has no sealed holdout tier to certify on")
    return name


EPISODE_MODES = ("auto", "tier", "fresh")
PROBE_DRAWS = 2  # `auto`'s first reruns, on the tier's episodes: whether both agents repeat themselves


def rerun_draws(reruns: int, mode: str) -> tuple[int, int]:
    """(draws, most draws) of each candidate's reruns (see `_reruns`): `draws` when the agents are
    not deterministic; with `auto`, deterministic agents add `reruns` on fresh episodes to the probe's two."""
    draws = reruns if mode == "fresh" else max(PROBE_DRAWS, reruns)
    return draws, (PROBE_DRAWS + reruns if mode == "auto" else draws)


def _draw(run: Run, iteration: int, k: int, fresh: bool, progress: bool, of: int,
          probe: bool = False) -> tuple[float, list]:
    """Rerun k (of `of`) of an iteration, uncached: (primary mean, per-episode successes); `probe`:
    one of `auto`'s first reruns, which tell whether the agents repeat themselves."""
    from harness.evaluation import evaluate

    tier, episodes = run.tier("rerun")
    metrics = evaluate(run.paths.iteration(iteration) / "candidate", tier, episodes=episodes, use_cache=False,
                       progress=progress, workers=_workers(episodes), noise_seed=k,
                       reseed=k * FRESH_SEED_STRIDE if fresh else 0, tiers=run.manifest.get("tiers"),
                       label=(f"certify: determinism probe {k}/{of}" if probe else f"certify: rerun {k}/{of}")
                             + f" of iteration {iteration}{' (fresh episodes)' if fresh else ''} · {tier}",
                       **run.backend())
    if not metrics["complete"]:
        raise UserError(f"certification: rerun {k} of iteration {iteration} is incomplete "
                        f"({metrics['infra_failures']} infrastructure failures); certify again")
    return metrics["primary"]["mean"], [r["success"] for r in metrics["episodes"]]


def _summary(iteration: int, draws: list[tuple[float, list]]) -> dict:
    means = [m for m, _ in draws]
    return {"iteration": iteration, "draws": means, "mean": statistics.fmean(means),
            "sd": statistics.stdev(means) if len(means) > 1 else 0.0}


def _rerun_episodes(run: Run, tier: str, cap: int | None) -> int:
    """How many episodes each rerun evaluates: the tier's, or the run's cap of them (as the dry run counts)."""
    from harness.tier_groups import capped_tier_episodes

    return len(capped_tier_episodes(run.executor(), tier, cap))


def _no_fresh(run: Run, reruns: int) -> str | None:
    """Why the rerun tier has no fresh episodes for `reruns` draws (None: it has)."""
    from harness.evaluation.evaluator import fresh_unavailable

    tier, episodes = run.tier("rerun")
    return fresh_unavailable(run.executor(), tier, episodes, tuple(k * FRESH_SEED_STRIDE for k in range(1, reruns + 1)))


def _reruns(run: Run, best: int, reruns: int, mode: str,
            progress: bool) -> tuple[dict, dict, bool | None, str, str | None, dict | None]:
    """(baseline draws, best draws, deterministic, episodes used: "the tier's" | "fresh",
    why no fresh episodes were drawn for deterministic agents or None, the probe's draws when
    fresh reruns replaced them or None).

    `auto`: two reruns on the tier's episodes first (the probe); when both agents
    repeat themselves exactly there (deterministic: more reruns would all be
    equal), every reported rerun runs on fresh episodes instead, if the executor
    can draw them, and otherwise certification stops after the probe (its two
    identical draws are what every rerun would give). `tier` / `fresh`: always
    those episodes, `reruns` times."""
    iterations = (0,) if best == 0 else (0, best)
    fresh = mode == "fresh"
    first = reruns if fresh else (PROBE_DRAWS if mode == "auto" else max(PROBE_DRAWS, reruns))
    probe = mode == "auto"
    draws = {it: [_draw(run, it, k, fresh, progress, first, probe) for k in range(1, first + 1)] for it in iterations}
    deterministic = None if fresh else all(d[0][1] == d[1][1] for d in draws.values())
    no_fresh = probe_draws = None
    if mode == "auto" and deterministic:
        no_fresh = _no_fresh(run, reruns)
        if no_fresh is None:
            fresh = True
            probe_draws = {"episode_seeds": "the tier's", "baseline": [m for m, _ in draws[0]],
                           "best": [m for m, _ in draws[best]]}
            draws = {it: [_draw(run, it, k, True, progress, reruns) for k in range(1, reruns + 1)] for it in iterations}
        # else: no fresh episodes, so the probe's draws are every rerun there would be: stop here
    elif mode == "auto":
        for it in iterations:
            draws[it] += [_draw(run, it, k, False, progress, reruns) for k in range(first + 1, reruns + 1)]
    draws = {it: d[:reruns] for it, d in draws.items()}
    return (_summary(0, draws[0]), _summary(best, draws[best]), deterministic, "fresh" if fresh else "the tier's",
            no_fresh, probe_draws)


def _note(deterministic: bool | None, used: str, executor: str, no_fresh: str | None) -> str | None:
    if not deterministic:
        return None
    if used == "fresh":
        import inspect

        from harness.executor_api import find_executor
        from harness.plugins import load_ref

        ref = find_executor(executor).fresh_episodes
        how = inspect.getdoc(load_ref(ref)).splitlines()[0] if ref else "each episode's seed shifted"
        return ("the agents are deterministic (two reruns on the tier's episodes were identical), so the reruns "
                f"ran on fresh episodes: {how}")
    if not no_fresh:
        return ("the agents are deterministic: reruns on the same episodes are identical, and --episodes tier "
                "kept the tier's episodes")
    return (f"the agents are deterministic: reruns on the same episodes are identical, and no fresh episodes "
            f"could be drawn: {no_fresh}; so certification stopped after the two probe reruns")


def _holdout(run: Run, tier: str, best: int, episodes: int | None, progress: bool) -> dict:
    """Baseline and best on the holdout, paired; the best is evaluated only when it is not iteration 0."""
    from harness.evaluation import evaluate

    runs = {}
    for label, iteration in (("baseline", 0),) + ((("best", best),) if best != 0 else ()):
        runs[label] = evaluate(run.paths.iteration(iteration) / "candidate", tier, episodes=episodes,
                               progress=progress, workers=_workers(episodes), tiers=run.manifest.get("tiers"),
                               label=f"certify: holdout, {label} (iteration {iteration}) · {tier}",
                               **run.backend())
        if not runs[label]["complete"]:
            raise UserError(f"certification: the holdout evaluation of iteration {iteration} is incomplete; "
                            "certify again")
    runs.setdefault("best", runs["baseline"])  # the best is iteration 0: the same evaluation
    paired = compare_evaluations(runs["baseline"], runs["best"], metrics=[])
    primary = paired["metrics"][paired["primary_metric"]]
    return {"tier": tier, "episodes": paired["shared"],
            "baseline": runs["baseline"]["primary"]["mean"], "best": runs["best"]["primary"]["mean"],
            "delta": primary["delta"], "ci": [primary["ci_low"], primary["ci_high"]],
            "gained": len(paired["episodes"]["gained"]), "lost": len(paired["episodes"]["lost"]),
            "p_value": primary["p_value"], "test": primary["test"], "verdict": paired["verdict"],
            "size": _holdout_size(run, tier, paired["shared"], episodes)}


def _holdout_size(run: Run, tier: str, shared: int, limit: int | None) -> str:
    """Why the holdout has `shared` episodes: the profile's tier (its description) and the cap given."""
    from harness.executor_api import load_executor

    spec = ((load_executor(run.manifest["executor"]).profile or {}).get("tiers") or {}).get(tier) or {}
    what = " ".join(str(spec.get("description") or "").split()) or "as the executor's profile defines it"
    cap = (f"; {limit} of them, taken round-robin over its groups (--holdout-episodes {limit})"
           if limit is not None else "")
    return f"{shared} episodes: tier {tier!r} of {run.manifest['executor']}, {what}{cap}"


def certify(run: Run, *, reruns: int = 3, holdout_episodes: int | None = None, episodes: str = "auto",
            progress: bool = False) -> dict:
    """Re-evaluate baseline and best (`episodes`: one of EPISODE_MODES, see
    `_reruns`), test both on the holdout, commit certification.json."""
    if reruns < 1:
        raise UserError("--reruns must be at least 1")
    if holdout_episodes is not None and holdout_episodes < 1:
        raise UserError("--holdout-episodes must be at least 1")
    if episodes not in EPISODE_MODES:
        raise UserError(f"--episodes {episodes!r}: choose one of {', '.join(EPISODE_MODES)}")
    rows = ledger.read_rows(run.paths.ledger)
    best_row = ledger.best_row(rows)
    if best_row is None:
        raise UserError(f"run {run.paths.run_id} has no committed iteration to certify")
    best = best_row["iteration"]
    selection = best_view(run.paths)
    baseline_draws, best_draws, deterministic, used, no_fresh, probe = _reruns(run, best, reruns, episodes, progress)
    tier, count = run.tier("rerun")
    record = {
        "schema_version": 1,
        "run_id": run.paths.run_id,
        "created": now_iso(),
        "best": best,
        "best_is_baseline": best == 0,
        "selection": selection,
        "reruns": {
            "tier": tier, "episodes": _rerun_episodes(run, tier, count), "times": len(baseline_draws["draws"]),
            "episode_seeds": used,
            "baseline": baseline_draws, "best": best_draws,
            "delta": best_draws["mean"] - baseline_draws["mean"],
            **({"probe": probe} if probe else {}),
        },
        "deterministic": deterministic,
        "note": _note(deterministic, used, run.manifest["executor"], no_fresh),
        "holdout": _holdout(run, holdout_tier(run), best, holdout_episodes, progress),
    }
    path = run.root / CERTIFICATION
    write_record("certification", path, record)
    gitops.commit(run.root, f"certification: best iteration {best}, holdout {record['holdout']['verdict']}",
                  (TRAILER, best), ["."])
    return dict(record, path=str(path))


def read(paths) -> dict | None:
    """The run's certification.json (schema-checked), or None before certification."""
    from harness.rundir.records import read_record

    path = paths.root / CERTIFICATION
    return read_record("certification", path) if path.is_file() else None


BEST_IS_BASELINE = ("the best is the baseline: no later iteration was selected over iteration 0, so iteration 0 "
                    "was rerun and evaluated on the holdout once and compared with itself (Δ 0 by construction)")


def render(record: dict) -> str:
    r, h = record["reruns"], record["holdout"]
    lines = [BEST_IS_BASELINE] if record.get("best_is_baseline") else []
    lines += [
        f"reruns ({r['times']}x, {r['tier']}, {r['episode_seeds']} episodes): "
        f"baseline {r['baseline']['mean']:.3f} ± {r['baseline']['sd']:.3f}, "
        f"best (iteration {record['best']}) {r['best']['mean']:.3f} ± {r['best']['sd']:.3f}, Δ {r['delta']:+.3f}",
        f"holdout ({h['tier']}, {h['episodes']} episodes): {h['baseline']:.3f} → {h['best']:.3f} "
        f"(Δ {h['delta']:+.3f}, +{h['gained']}/−{h['lost']}, p={h['p_value']}): {h['verdict']}",
    ]
    if h.get("size"):
        lines.append(f"holdout size: {h['size']}")
    if record.get("note"):
        lines.append(record["note"])
    if r.get("probe"):
        lines.append("determinism probe (the tier's episodes, not in the reruns above): baseline "
                     + ", ".join(f"{m:.3f}" for m in r["probe"]["baseline"]) + "; best "
                     + ", ".join(f"{m:.3f}" for m in r["probe"]["best"]))
    return "\n".join(lines)

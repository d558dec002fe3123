"""`architect evaluate RUN STAGING --race`: the staged child against its parent
in batches of the parent's performance-tier episodes (shuffled once, fixed
order), stopping when the sequential test decides (harness.evaluation.racing).

STAGING/eval/ then holds an ordinary metrics.json over the episodes raced, the
verdict (as `evaluate` writes it, plus the race) and race.json."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.errors import UserError
from harness.evaluation.racing import Race, RaceConfig, race_order
from harness.evaluation.records import metric_value
from harness.fileio import read_json, write_json_atomic
from harness.rundir import tiers
from harness.rundir.run import Run

RACE_FILE = "race.json"


def race_staging(run: Run, staging: Path, config: RaceConfig, progress: bool = False) -> dict:
    from harness.evaluation import evaluate

    try:
        config.check()
    except ValueError as exc:
        raise UserError(f"--race: {exc}") from None
    meta = run.staging_meta(staging)
    parent_path = run.paths.iteration(meta["parent"]) / "eval" / "metrics.json"
    try:
        parent = read_json(parent_path)
    except (OSError, ValueError):
        raise UserError(f"{parent_path}: the parent's evaluation is missing or unreadable; evaluate without --race") from None
    metric = (parent.get("primary") or {}).get("metric") or "success_rate"
    scored = {str(r["episode_id"]): metric_value(r, metric) for r in parent.get("episodes") or []
              if not r.get("infra_error")}
    if any(v is None or not 0.0 <= v <= 1.0 for v in scored.values()):
        raise UserError(f"--race needs a primary metric in [0, 1] per episode; {metric!r} is not")
    tier, _ = run.tier("eval")
    candidate = staging / "candidate"
    digest = tiers.content_hash(candidate)
    out = staging / "eval"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    race = Race(config)
    order = race_order(sorted(scored), config.seed)
    done: list[str] = []
    incomplete, infra_failures = False, 0
    for start in range(0, len(order), config.batch):
        batch = order[start:start + config.batch]
        scratch = out / "batch"
        metrics = evaluate(candidate, tier, only=batch, out_dir=scratch, progress=progress,
                           tiers=run.manifest.get("tiers"))
        shutil.rmtree(scratch)
        if not metrics.get("complete", True):
            incomplete = True
            infra_failures = metrics.get("infra_failures", 0)
            break
        child = {str(r["episode_id"]): metric_value(r, metric) for r in metrics["episodes"]}
        race.add([scored[e] for e in batch], [child[e] for e in batch])
        done += batch
        if race.verdict is not None:
            break
    if not incomplete:
        race.finish()
    # every episode raced again, from the cache: one ordinary metrics.json with logs
    metrics = evaluate(candidate, tier, only=done or order[:1], out_dir=out, progress=False,
                       tiers=run.manifest.get("tiers"))
    reasons = ["evaluation incomplete (infrastructure failures); not scored"] if incomplete else []
    result = dict(race.to_dict(), tier=tier, parent=meta["parent"], parent_episodes=len(scored))
    write_json_atomic(out / RACE_FILE, result)
    verdict = {"passed": not reasons, "reasons": reasons, "candidate_hash": digest, "tier": tier,
               "primary": tiers.summary(metrics), "cost_usd": (metrics.get("model") or {}).get("cost_usd"),
               "wall_seconds": metrics.get("wall_seconds"), "complete": not incomplete,
               "infra_failures": infra_failures, "race": result}
    write_json_atomic(out / tiers.VERDICT, verdict)
    return verdict

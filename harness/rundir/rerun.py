"""`architect rerun`: fresh draws of a committed iteration's performance score."""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from harness.errors import UserError
from harness.rundir import gitops, tiers
from harness.fileio import read_json, write_json_atomic
from harness.rundir.records import now_iso
from harness.rundir.run import Run

RERUN_TRAILER = "Architect-Rerun"


def rerun(run: Run, iteration: int, times: int = 3, progress: bool = False) -> dict:
    if times < 1:
        raise UserError("--times must be at least 1")
    if iteration not in run.committed_iterations():
        raise UserError(f"--iter {iteration}: no such committed iteration (have {run.committed_iterations()})")
    folder = run.paths.iteration(iteration)
    tier, episodes = run.tier("rerun")
    draws = []
    for _ in range(times):
        with tempfile.TemporaryDirectory(prefix="architect-rerun-") as tmp:
            verdict = tiers.run_tier(folder / "candidate", Path(tmp) / "eval", kind="eval", tier=tier,
                                     episodes=episodes, use_cache=False, progress=progress,
                                     evaluation=run.manifest.get("evaluation"), tiers=run.manifest.get("tiers"))
        if not verdict["passed"]:
            raise UserError(f"rerun of iteration {iteration} failed: " + "; ".join(verdict["reasons"]))
        draws.append({**verdict["primary"], "wall_seconds": verdict.get("wall_seconds"), "time": now_iso()})
    path = folder / "reruns.json"
    record = read_json(path) if path.exists() else {"iteration": iteration, "tier": tier, "draws": []}
    record["draws"].extend(draws)
    record["episodes"] = episodes
    means = [d["mean"] for d in record["draws"] if d.get("mean") is not None]
    record["mean"] = statistics.fmean(means) if means else None
    record["sd"] = statistics.stdev(means) if len(means) > 1 else 0.0
    write_json_atomic(path, record)
    subject = f"rerun of iteration {iteration}: {len(draws)} draw(s), mean {record['mean']:.4f} ± {record['sd']:.4f}"
    gitops.commit(run.root, subject, (RERUN_TRAILER, iteration), [path.relative_to(run.root).as_posix()])
    return dict(record, path=str(path))

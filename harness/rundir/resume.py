"""The run a loop drives: a resumed one (named, or the latest of a variant on a
seed) or a new one."""

from __future__ import annotations

from pathlib import Path

from harness.errors import UserError
from harness.rundir.layout import RunPaths, resolve_run
from harness.rundir.records import read_record


def latest_run(base: Path, variant: str, executor: str, seed_candidate: str) -> str | None:
    """The most recently created run of this variant on this executor's seed."""
    found = []
    for manifest in Path(base).glob("*/manifest.json"):
        try:
            data = read_record("manifest", manifest)
        except UserError:
            continue
        if (data["variant"], data["executor"], data.get("seed_candidate", data["executor"])) == \
                (variant, executor, seed_candidate):
            found.append((str(data.get("created", "")), manifest.parent.name))
    return max(found)[1] if found else None


def open_or_start(variant: str, executor_or_seed: str, *, run_id: str | None, resume: bool, runs_dir: Path,
                  say, evaluation: dict | None = None, **new_run) -> RunPaths:
    """With `resume`: the run `run_id` (default: the latest of `variant` on this seed) if it exists,
    checked to be of this variant and seed and kept on its evaluation backend. Otherwise a new run,
    `init_run(variant, executor_or_seed, run_id=..., evaluation=..., **new_run)`, iteration 0 committed."""
    from harness.executor_api import resolve_seed
    from harness.rundir.create import init_run

    spec, seed_candidate = resolve_seed(executor_or_seed)
    base = Path(runs_dir)
    paths = None
    if resume:
        if not run_id:
            run_id = latest_run(base, variant, spec.name, seed_candidate)
            if run_id is None:
                raise UserError(f"--resume: no {variant} run on {executor_or_seed} under {base}; name one with --run-id")
            say(f"resuming the latest {variant} run on {executor_or_seed}: {run_id}")
        if (base / run_id / "manifest.json").exists():
            paths = resolve_run(run_id, base)
        else:
            say(f"no run {run_id} under {base} yet: starting it")
    elif run_id and (base / run_id).exists():
        raise UserError(f"{base / run_id} already exists: pass --resume to continue it, or another --run-id")
    if paths is None:
        paths = init_run(variant, executor_or_seed, runs_dir=base, run_id=run_id, say=say, evaluation=evaluation,
                         **new_run)
        say(f"run {paths.run_id}: iteration 0 committed")
        return paths
    manifest = read_record("manifest", paths.manifest)
    found = (manifest["variant"], manifest["executor"], manifest.get("seed_candidate", manifest["executor"]))
    if found != (variant, spec.name, seed_candidate):
        raise UserError(f"run {paths.run_id} is {manifest['variant']} on {manifest['executor']}, "
                        f"not {variant} on {executor_or_seed}")
    tier = new_run.get("performance_tier")
    if tier is not None and tier != manifest["profiles"]["performance_tier"]:
        raise UserError(f"run {paths.run_id} searches tier {manifest['profiles']['performance_tier']!r} "
                        f"(manifest.json), not {tier!r}: resume it without --tier, or start a new run")
    if new_run.get("run_tiers") is not None and new_run["run_tiers"] != manifest.get("tiers"):
        raise UserError(f"run {paths.run_id} keeps its episode lists in manifest.json (tiers); resume it "
                        "without --episodes/--holdout, or start a new run")
    if evaluation is not None and evaluation != manifest.get("evaluation"):
        raise UserError(f"run {paths.run_id} keeps its evaluation backend in manifest.json "
                        f"({manifest.get('evaluation') or 'not set'}); resume it without --backend/--ray-address")
    return paths

"""`architect init`: a new run directory with iteration 0 = the executor's seed
candidate, evaluated and committed. Built in a temporary folder and renamed
into place, so an interrupted init leaves nothing behind."""

from __future__ import annotations

import os
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

from harness.errors import UserError
from harness.rundir import gitops, goal, ledger, proposal, state, tiers
from harness.fileio import write_json_atomic, write_text_atomic
from harness.rundir.init_progress import InitInProgress
from harness.rundir.layout import GITIGNORE, RUN_ID_PATTERN, RunPaths
from harness.rundir.records import now_iso, write_record

DEFAULT_MAX_SKIPS = 10



def new_run_id(variant: str, executor: str, runs_dir: Path) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    base = re.sub(r"[^A-Za-z0-9._-]", "-", f"{variant}-{executor}-{stamp}")
    run_id, n = base, 1
    while (runs_dir / run_id).exists():
        n += 1
        run_id = f"{base}-{n}"
    return run_id


def init_run(variant: str, executor_or_seed: str, *, runs_dir: Path, run_id: str | None = None,
             max_iterations: int | None = None, max_skips: int = DEFAULT_MAX_SKIPS,
             smoke_episodes: int | None = None, eval_episodes: int | None = None,
             seed: int | None = None, progress: bool = False, say=lambda msg: None,
             spend_caps: dict | None = None, fitness=None, performance_tier: str | None = None,
             evaluation: dict | None = None, run_tiers: dict | None = None,
             holdout_tier: str | None = None) -> RunPaths:
    """`spend_caps`: {"max_cost_usd", "max_tokens"} (None: no cap), enforced between iterations.
    `fitness(variant, metrics, primary_metric=...)`: the variant's conversion, written to
    iteration 0's fitness.json like every later iteration's (the caller hands it in).
    `performance_tier` (default: the profile's) is the tier `evaluate` runs, and with it the
    matching sealed holdout certification uses (`tiers.search_tiers`); `evaluation` the
    backend setting stored in the manifest. `run_tiers`: tiers beyond the executor profile's (episode
    list files, harness.episode_lists), stored in the manifest, which `performance_tier` and
    `holdout_tier` (a sealed one, for certification) may name."""
    from harness.variant_api import find_variant

    variant_spec = find_variant(variant)  # an unknown variant is refused with the known ones
    if max_iterations is None:
        max_iterations = variant_spec.max_iterations
    if run_id is not None and not RUN_ID_PATTERN.match(run_id):
        raise UserError(f"--run-id {run_id!r}: use letters, digits, '.', '_' and '-' (not starting with a dot)")
    if max_iterations < 0 or max_skips < 1:
        raise UserError("--max-iterations must be >= 0 and --max-skips >= 1")
    spec, seed_candidate, executor, seed_dir = resolve_seed_candidate(executor_or_seed)
    executor_name = spec.name
    runs_dir = Path(runs_dir)
    run_id = run_id or new_run_id(variant, seed_candidate, runs_dir)
    target = runs_dir / run_id
    _refuse_existing(target)
    executor = executor.with_tiers(run_tiers)
    performance_tier, default_holdout = tiers.chosen_search_tier(executor, performance_tier, variant)
    holdout_tier = holdout_tier or default_holdout
    profile = dict(executor.profile, performance_tier=performance_tier, holdout_tier=holdout_tier)
    runs_dir.mkdir(parents=True, exist_ok=True)
    build = runs_dir / f".init-{run_id}-{os.getpid()}"
    with InitInProgress(runs_dir, run_id, build) as in_progress:
        _refuse_existing(target)  # another init may have finished between the first check and the lock
        _remove_abandoned_builds(runs_dir, run_id)

        def tell(text: str) -> None:
            in_progress.say(text)
            say(text)

        for tier, audit in tiers.refuse_duplicates(executor, (performance_tier, holdout_tier)).items():
            why = audit.get("content_unavailable")
            unavailable = f"; content unavailable: {why}" if why else ""
            tell(f"tier {tier}: {audit['distinct']} distinct episodes (by {audit['by']}{unavailable})")
        notes = tiers.tier_notes(executor, performance_tier, holdout_tier,
                                 tiers.episodes_override({"eval_episodes": eval_episodes}, "eval"))
        for warning in notes["warnings"]:
            tell(f"warning: {warning}")
        if notes["eval_subset"]:
            tell(f"{performance_tier}: {notes['eval_subset']}")
        try:
            _build(RunPaths(build), variant, executor_name, seed_candidate, seed_dir, profile, run_id, max_iterations,
                   max_skips, smoke_episodes, eval_episodes, seed, progress, tell, spec, spend_caps or {}, fitness,
                   backend=evaluation, run_tiers=run_tiers)
            try:
                build.rename(target)
            except OSError:
                raise UserError(f"{target} was created by another process while this init ran") from None
        except BaseException:
            shutil.rmtree(build, ignore_errors=True)
            raise
    return RunPaths(target.resolve())


def _refuse_existing(target: Path) -> None:
    if target.exists():
        raise UserError(f"{target} already exists: choose another --run-id (or resume it with `architect loop --resume`)")


def resolve_seed_candidate(executor_or_seed: str):
    """(executor spec, seed name, loaded executor, seed folder) of an executor or seed name."""
    from harness.executor_api import load_executor, resolve_seed

    spec, seed_candidate = resolve_seed(executor_or_seed)
    try:
        executor = load_executor(spec.name)
    except UserError:
        raise
    except Exception as exc:
        raise UserError(f"executor {spec.name!r} cannot be loaded: {type(exc).__name__}: {exc}") from None
    seed_dir = spec.seed_dir(seed_candidate)
    if not (seed_dir / "graph.json").is_file():
        raise UserError(f"seed {seed_candidate!r} of executor {spec.name!r} has no graph.json ({seed_dir})")
    return spec, seed_candidate, executor, seed_dir


def dry_run(variant: str, executor_or_seed: str, *, smoke_episodes: int | None, eval_episodes: int | None,
            tier: str | None = None, max_iterations: int | None = None, run_tiers: dict | None = None,
            holdout_tier: str | None = None) -> dict:
    """What `init` (iteration 0) and each later iteration will run, before anything runs."""
    from harness.rundir.plan import certification_plan, iteration_plan
    from harness.variant_api import find_variant

    variant_spec = find_variant(variant)
    spec, seed_candidate, executor, seed_dir = resolve_seed_candidate(executor_or_seed)
    executor = executor.with_tiers(run_tiers)
    performance_tier, default_holdout = tiers.chosen_search_tier(executor, tier, variant)
    holdout_tier = holdout_tier or default_holdout
    audits = tiers.refuse_duplicates(executor, (performance_tier, holdout_tier))
    caps = {"smoke_episodes": smoke_episodes, "eval_episodes": eval_episodes}
    plan = iteration_plan(seed_dir, executor, smoke_tier="smoke", performance_tier=performance_tier,
                          smoke_episodes=tiers.episodes_override(caps, "smoke"),
                          eval_episodes=tiers.episodes_override(caps, "eval"))
    rerun_tier = (executor.profile or {}).get("rerun_tier") or performance_tier
    certification = certification_plan(executor, seed_dir, rerun_tier=rerun_tier,
                                       rerun_cap=tiers.episodes_override(caps, "eval"), holdout_tier=holdout_tier,
                                       measured=plan["measured"])
    notes = tiers.tier_notes(executor, performance_tier, holdout_tier, tiers.episodes_override(caps, "eval"))
    return dict(plan, variant=variant, executor=spec.name, seed_candidate=seed_candidate, certification=certification,
                performance_tier=performance_tier, holdout_tier=holdout_tier, **notes,
                distinct_episodes={t: {k: a[k] for k in ("episodes", "distinct", "by", "content_unavailable") if k in a}
                                   for t, a in audits.items()},
                max_iterations=variant_spec.max_iterations if max_iterations is None else max_iterations)


def _iteration0_fitness(fitness, variant: str, iteration0: Path, primary_metric: str) -> None:
    """iteration 0's fitness.json, like every later iteration's (the variant's one figure)."""
    from harness.rundir.records import read_metrics

    metrics = read_metrics(iteration0 / "eval" / "metrics.json")
    if metrics is not None:
        write_json_atomic(iteration0 / "fitness.json", fitness(variant, metrics, primary_metric=primary_metric))


def _per_group(metrics_path: Path) -> str:
    """'group successes/episodes (SR %)' for each episode group (level, suite) of an evaluation."""
    from harness.evaluation.compare import group_reader
    from harness.rundir.records import read_metrics

    metrics = read_metrics(metrics_path) or {}
    group_of = group_reader(metrics.get("executor"))
    groups: dict[str, list[bool]] = {}
    for record in metrics.get("episodes") or ():
        groups.setdefault(group_of(record), []).append(bool(record["success"]))
    return ", ".join(f"{name} {sum(v)}/{len(v)} ({100 * sum(v) / len(v):.0f} %)" for name, v in groups.items())


def _remove_abandoned_builds(runs_dir: Path, run_id: str) -> None:
    """Folders of inits of this run id whose process is gone (killed mid-init)."""
    for folder in runs_dir.glob(f".init-{run_id}-*"):
        pid = folder.name.rsplit("-", 1)[-1]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:
            pass  # alive, someone else's


def _build(paths, variant, executor_name, seed_candidate, seed_dir, profile, run_id, max_iterations, max_skips,
           smoke_episodes, eval_episodes, seed, progress, say, spec, spend_caps, fitness,
           backend: dict | None = None, run_tiers: dict | None = None) -> None:
    from harness.rundir.plan import provenance

    paths.root.mkdir(parents=True)
    gitops.init(paths.root)
    write_text_atomic(paths.root / ".gitignore", GITIGNORE)
    iteration0 = paths.iteration(0)
    candidate = iteration0 / "candidate"
    shutil.copytree(seed_dir, candidate, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    smoke_tier = "smoke"
    performance_tier = profile["performance_tier"]
    whitelist = list(profile.get("whitelist") or ["graph.json"])
    manifest = {
        "schema_version": 1,
        "run_id": run_id,
        "variant": variant,
        "executor": executor_name,
        "seed_candidate_hash": tiers.content_hash(candidate),
        "seed": seed,
        "profiles": {
            "smoke_tier": smoke_tier,
            "performance_tier": performance_tier,
            "holdout_tier": profile["holdout_tier"],
            **({"rerun_tier": profile["rerun_tier"]} if profile.get("rerun_tier") else {}),
            "primary_metric": str(profile.get("primary_metric") or "success"),
            "whitelist": whitelist,
            "model_profile": profile.get("model_profile"),
        },
        "caps": {"max_iterations": max_iterations, "max_consecutive_skips": max_skips,
                 "smoke_episodes": smoke_episodes, "eval_episodes": eval_episodes,
                 **{k: v for k, v in spend_caps.items() if v is not None}},
        "provenance": provenance(spec),
        "created": now_iso(),
        "seed_candidate": seed_candidate,
    }
    if backend:
        manifest["evaluation"] = backend
    if run_tiers:
        manifest["tiers"] = run_tiers
    write_record("manifest", paths.manifest, manifest)
    goal.write(paths, cap=max_iterations, metric=manifest["profiles"]["primary_metric"], executor=executor_name,
               tier=performance_tier, whitelist=whitelist)
    write_text_atomic(paths.understanding, "# Understanding\n\n(what the search has learned about this executor)\n")
    write_text_atomic(paths.memory / ".keep", "")
    proposal.write(iteration0 / "proposal.md", {"description": "seed candidate", "axes": [], "parent": None},
                   f"\nThe seed candidate {seed_candidate} of executor {executor_name}.\n")
    caps = manifest["caps"]
    from harness.rundir.check import check_seed

    checked = check_seed(candidate, iteration0 / "check.json")
    if checked["violations"]:
        raise UserError(f"the seed candidate {seed_candidate} of {executor_name} fails its check: "
                        + checked["violations"][0]["message"])
    say("iteration 0: smoke tier")
    smoke = tiers.run_tier(candidate, iteration0 / "smoke", kind="smoke", tier=smoke_tier,
                           episodes=tiers.episodes_override(caps, "smoke"), progress=progress,
                           evaluation=backend, tiers=run_tiers)
    if not smoke["passed"]:
        raise UserError(f"the seed candidate {seed_candidate} of {executor_name} fails the smoke gate"
                        f"{_model_hint(smoke['reasons'])}: " + "; ".join(smoke["reasons"]))
    say(f"iteration 0: performance tier ({performance_tier})")
    evaluation = tiers.run_tier(candidate, iteration0 / "eval", kind="eval", tier=performance_tier,
                                episodes=tiers.episodes_override(caps, "eval"), progress=progress,
                                evaluation=backend, tiers=run_tiers)
    if not evaluation["passed"]:
        raise UserError(f"the seed candidate {seed_candidate} of {executor_name} could not be evaluated"
                        f"{_model_hint(evaluation['reasons'])}: " + "; ".join(evaluation["reasons"]))
    say(f"iteration 0: {performance_tier} per group: {_per_group(iteration0 / 'eval' / 'metrics.json')}")
    if fitness is not None:
        _iteration0_fitness(fitness, variant, iteration0, manifest["profiles"]["primary_metric"])
    tiers.record_final_path(iteration0, "iterations/0")
    write_text_atomic(iteration0 / "diff.txt", "")
    write_json_atomic(iteration0 / "patch.json", {"ops": []})
    row = {
        "attempt": 0, "iteration": 0, "slot": None, "parent": None, "status": "committed", "reason": None,
        "smoke": {"passed": True, "reasons": []}, "primary": evaluation["primary"],
        **tiers.combined(smoke, evaluation),
        "description": "seed candidate", "axes": [], "candidate_hash": manifest["seed_candidate_hash"],
        "time": now_iso(),
    }
    ledger.append_row(paths.ledger, row)
    state.write(paths, state.derive([row]))
    gitops.commit_iteration(paths.root, 0, "iteration 0: seed candidate", ["."])


def _model_hint(reasons: list[str]) -> str:
    if not any("ModelCallError" in r for r in reasons):
        return ""
    return (" (a model endpoint failed: start the server of the graph's pinned profile, or point "
            "$ARCHITECT_MODEL_BASE_URL at one, or run offline: docs/models.md for replay cassettes; SHAPER: "
            "`architect shaper init SEED --scripted-models`)")

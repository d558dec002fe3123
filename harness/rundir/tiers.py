"""Smoke and performance evaluation of a candidate folder, with the verdict
bound to the candidate hash it was computed for."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from harness.errors import UserError
from harness.fileio import read_json, write_json_atomic

VERDICT = "verdict.json"
FEW_EPISODES = 4


def evaluation_workers(cap: int | None) -> int | None:
    """The workers a run's evaluation asks for when its episodes are capped at `cap`: one for a
    handful (starting a worker costs more than a few short episodes; the first worker of a process
    also starts the evaluation's forkserver), else None: the backend's default (local: one per core).
    Smoke, performance, reruns and certification all follow it, and so do the dry runs' estimates."""
    return 1 if cap is not None and cap <= FEW_EPISODES else None


def content_hash(candidate: Path) -> str:
    """The candidate's canonical hash; raw bytes when graph.json does not parse
    (a broken candidate still gets a stable identity for its check verdict)."""
    from harness.canvas.hashing import candidate_hash

    try:
        return candidate_hash(candidate)
    except (UserError, ValueError):
        from harness.rundir.whitelist import candidate_files

        digest = hashlib.sha256(b"raw\0")
        for rel, content in candidate_files(candidate).items():
            digest.update(rel.encode() + b"\0" + hashlib.sha256(content).digest())
        return digest.hexdigest()


def search_tiers(executor, tier: str | None = None) -> tuple[str, str | None]:
    """(performance tier, sealed holdout tier) of a run: `tier` (default: the
    profile's performance tier), which must be an unsealed tier, and the sealed
    tier certification uses for it: `holdout<suffix>` for `search<suffix>`
    (BabyAI: `holdout-hard` for `search-hard`) when the profile has it, else
    `holdout`; None when the executor has no sealed holdout."""
    tiers = (executor.profile or {}).get("tiers") or {}
    name = tier or executor.profile.get("performance_tier") or "search"
    open_tiers = sorted(t for t, spec in tiers.items() if not spec.get("sealed"))
    if name not in tiers:
        raise UserError(f"--tier {name!r}: executor {executor.name!r} has no such tier; choose one of "
                        f"{', '.join(open_tiers)}")
    if tiers[name].get("sealed"):
        raise UserError(f"--tier {name!r} is sealed (a holdout no proposer may see); choose one of "
                        f"{', '.join(open_tiers)}")
    suffix = name[len("search"):] if name.startswith("search") else ""
    for holdout in (f"holdout{suffix}", "holdout"):
        if holdout in tiers and tiers[holdout].get("sealed"):
            return name, holdout
    return name, None


def chosen_search_tier(executor, tier: str | None, variant: str) -> tuple[str, str | None]:
    """`search_tiers` for a new run of `variant`, refusing a split of the profile's `splits`
    unless the variant is the one they are for (SPLITS_VARIANT: SHAPER's train, validation
    and test tiers are for `architect shaper`, not a search tier of another variant)."""
    from harness.tier_groups import SPLITS_VARIANT, split_names, tier_kind

    name, holdout = search_tiers(executor, tier)
    split = split_names(executor.profile).get(name)
    if split is not None and variant != SPLITS_VARIANT:
        usable = sorted(t for t in executor.profile["tiers"]
                        if tier_kind(executor.profile, t) in ("search", "protocol"))
        raise UserError(f"--tier {name!r} is SHAPER's {split} split (used by `architect shaper`), not a search "
                        f"tier: choose one of {', '.join(usable)}")
    return name, holdout


def tier_notes(executor, tier: str, holdout: str | None, eval_episodes: int | None) -> dict:
    """What a new run should be told about its tiers: `warnings` (a search tier covering fewer
    groups than its holdout) and `eval_subset` (which episodes a cap of N takes, or None)."""
    from harness.tier_groups import coverage_warning, split_names, subset_text

    # a split (SHAPER's) is certified on its own test splits, not compared with the holdout
    warning = None if tier in split_names(executor.profile) else coverage_warning(executor, tier, holdout)
    return {"warnings": [warning] if warning else [],
            "eval_subset": subset_text(executor.episodes(tier), eval_episodes, executor.spec.level_key)}


def tier_table(executor) -> dict[str, dict]:
    """Each tier of the executor's profile: episodes, kind (`tier_groups.tier_kind`), sealed,
    description, episodes per group, and for an unsealed search tier the sealed holdout a
    run searching it is certified on."""
    from harness.tier_groups import group_counts, split_names, tier_kind

    splits = split_names(executor.profile)
    out = {}
    for name, spec in executor.profile["tiers"].items():
        episodes = executor.episodes(name)
        row = {"episodes": len(episodes), "kind": tier_kind(executor.profile, name),
               "sealed": bool(spec.get("sealed")), "description": spec.get("description"),
               "groups": group_counts(episodes, executor.spec.level_key)}
        if name in splits:
            row["split"] = f"SHAPER {splits[name]} (for `architect shaper`; refused as a search tier of other variants)"
        elif row["kind"] in ("search", "protocol", "other"):
            row["certifies_against"] = search_tiers(executor, name)[1]
        out[name] = row
    return out


def audit_tier(executor, tier: str) -> dict:
    """How many distinct episodes `tier` holds: by the executor's content
    fingerprint (`episode_content`) when it has one, else by episode key.
    Cached under the cache folder by the tier's episodes and the fingerprint's
    source, so a fixed tier is fingerprinted once. A fingerprint that needs what
    is not installed (the simulator, the data) leaves the audit by episode key,
    with `content_unavailable` saying why, uncached (the evaluation itself
    refuses then, naming what is missing)."""
    import inspect
    import json

    from harness.plugins import load_ref
    from harness.roots import cache_home

    episodes = executor.episodes(tier)
    ref = executor.spec.episode_content
    fingerprint = load_ref(ref) if ref else None
    source = inspect.getsource(inspect.getmodule(fingerprint)) if fingerprint else ""
    key = hashlib.sha256(json.dumps([executor.name, episodes, source], sort_keys=True,
                                    default=str).encode()).hexdigest()
    cached = cache_home() / "tier-audit" / f"{key}.json"
    try:
        return read_json(cached)
    except (OSError, ValueError):
        pass
    unavailable = None
    try:
        contents = [fingerprint(e) for e in episodes] if fingerprint else None
    except (UserError, RuntimeError, ImportError, OSError) as exc:  # a simulator or data set not installed
        contents, unavailable = None, getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    first: dict[str, str] = {}
    duplicates = []
    for content, episode in zip(contents if contents is not None else [e["episode_id"] for e in episodes], episodes):
        if content in first:
            duplicates.append([first[content], episode["episode_id"]])
        else:
            first[content] = episode["episode_id"]
    result = {"tier": tier, "episodes": len(episodes), "distinct": len(first),
              "by": "episode key" if contents is None else "content", "duplicates": duplicates}
    if unavailable:
        return dict(result, content_unavailable=unavailable)
    write_json_atomic(cached, result)
    return result


def refuse_duplicates(executor, tier_names) -> dict[str, dict]:
    """audit_tier of each tier; a UserError naming the first duplicates when any tier holds some."""
    audits = {tier: audit_tier(executor, tier) for tier in tier_names if tier}
    for tier, audit in audits.items():
        if audit["duplicates"]:
            pairs = f"{len(audit['duplicates'])} pair(s)"
            if tier not in executor.sealed:  # a sealed tier's episode ids are never shown
                pairs += ", e.g. " + ", ".join(f"{a} = {b}" for a, b in audit["duplicates"][:3])
            raise UserError(f"tier {tier!r} of executor {executor.name!r} holds duplicate episodes (same "
                            f"{audit['by']}): {pairs}; only {audit['distinct']} of its {audit['episodes']} "
                            "episodes are distinct: fix the profile")
    return audits


def run_tier(candidate: Path, out_dir: Path, *, kind: str, tier: str, episodes: int | None,
             use_cache: bool = True, progress: bool = False, evaluation: dict | None = None,
             tiers: dict | None = None, warm_scope: str | None = None) -> dict:
    """Evaluate `candidate` on `tier` into `out_dir` (metrics.json, episodes/,
    verdict.json). kind "smoke" applies the smoke gate; "eval" requires a
    complete evaluation with a primary mean. `evaluation` is the manifest's
    backend setting ({"backend", "ray_address"}), if any; `tiers` its `tiers:` (episode lists);
    `warm_scope` the run's folder, whose warm forkserver the workers fork from."""
    from harness.evaluation import evaluate, smoke_gate

    digest = content_hash(candidate)
    use_cache = use_cache and not cache_disabled()
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    workers = evaluation_workers(episodes)
    evaluation = evaluation or {}
    folder = out_dir.parent  # iterations/N (iteration 0 at init) or staging/S
    label = f"iteration {folder.name}" if folder.parent.name == "iterations" else f"staging {folder.name}"
    label += f" · {tier}"
    try:
        metrics = evaluate(candidate, tier, episodes=episodes, workers=workers, out_dir=out_dir, label=label,
                           use_cache=use_cache, progress=progress, backend=evaluation.get("backend"),
                           ray_address=evaluation.get("ray_address"), tiers=tiers, warm_scope=warm_scope)
    except UserError as exc:
        verdict = {"passed": False, "reasons": [exc.message], "candidate_hash": digest, "tier": tier,
                   "complete": False, "infra_failures": None}
        write_json_atomic(out_dir / VERDICT, verdict)
        return verdict
    if not (out_dir / "metrics.json").exists():
        write_json_atomic(out_dir / "metrics.json", metrics)
    if kind == "smoke":
        verdict = smoke_gate(metrics)
    else:
        reasons = []
        if not metrics.get("complete", True):
            from harness.evaluation.failures import infra_cause

            reasons.append(f"evaluation incomplete ({infra_cause(metrics)}); not scored")
        if (metrics.get("primary") or {}).get("mean") is None:
            reasons.append("no primary metric value")
        verdict = {"passed": not reasons, "reasons": reasons}
    model = metrics.get("model") or {}
    tokens = [model.get(k) for k in ("input_tokens", "output_tokens") if isinstance(model.get(k), int)]
    verdict = dict(verdict, candidate_hash=digest, tier=tier, primary=summary(metrics),
                   cost_usd=model.get("cost_usd"), tokens=sum(tokens) if tokens else None,
                   wall_seconds=metrics.get("wall_seconds"), agent_errors=metrics.get("agent_errors"),
                   cached_episodes=metrics.get("cached"), episodes=metrics.get("n_episodes"),
                   complete=bool(metrics.get("complete", True)), infra_failures=metrics.get("infra_failures", 0))
    write_json_atomic(out_dir / VERDICT, verdict)
    return verdict


def record_final_path(folder: Path, final: str) -> None:
    """Point `candidate.path` of the folder's smoke and performance metrics.json at
    where the candidate will live, run-relative (`iterations/N/candidate/graph.json`),
    instead of the staging or build folder it was evaluated in."""
    from harness.rundir.records import read_metrics

    for kind in ("smoke", "eval"):
        path = folder / kind / "metrics.json"
        metrics = read_metrics(path)
        if metrics is not None:
            metrics["candidate"]["path"] = f"{final}/candidate/graph.json"
            write_json_atomic(path, metrics)


def summary(metrics: dict) -> dict:
    primary = metrics.get("primary") or {}
    ci = primary.get("ci95") or [None, None]
    return {"metric": primary.get("metric"), "mean": primary.get("mean"), "ci_low": ci[0], "ci_high": ci[1],
            "ci_method": primary.get("ci_method"), "episodes": primary.get("n")}


def read_verdict(out_dir: Path) -> dict | None:
    try:
        return read_json(out_dir / VERDICT)
    except (OSError, ValueError):
        return None


def episodes_override(caps: dict, kind: str) -> int | None:
    """Episode count for a tier kind: $ARCHITECT_TIER_EPISODES, else the
    manifest cap `<kind>_episodes`, else None (the whole tier)."""
    env = os.environ.get("ARCHITECT_TIER_EPISODES", "")
    return int(env) if env.isdigit() and int(env) > 0 else caps.get(f"{kind}_episodes")


def combined(*verdicts: dict | None) -> dict:
    """Total cost and wall time over several verdicts (None where none reported)."""
    out = {}
    for key, digits in (("cost_usd", 6), ("tokens", 0), ("wall_seconds", 3), ("cached_episodes", 0)):
        values = [v[key] for v in verdicts if v and v.get(key) is not None]
        out[key] = (round(sum(values), digits) if digits else int(sum(values))) if values else None
    return out


NO_CACHE_ENV = "ARCHITECT_NO_CACHE"


def cache_disabled() -> bool:
    """`ARCHITECT_NO_CACHE=1`: every smoke and performance evaluation of a run runs afresh."""
    return os.environ.get(NO_CACHE_ENV, "").strip().lower() in ("1", "true", "yes")

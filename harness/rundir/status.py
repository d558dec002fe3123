"""`architect status`: the run's state, and whether git history, ledger, state
and the iterations/ folders agree."""

from __future__ import annotations

from pathlib import Path

from harness.errors import UserError
from harness.roots import describe, describe_text
from harness.rundir import gitops, goal, ledger, state, stopping
from harness.rundir.consistency import consistency
from harness.rundir.layout import RunPaths, resolve_run
from harness.rundir.lock import RunBusy, run_lock
from harness.rundir.permissions import rules_for, text as permissions_text
from harness.rundir.records import read_record


def run_status(ref, runs_dir=None) -> dict:
    from harness.rundir.recover import recover

    initializing = _initializing(ref, runs_dir)
    if initializing is not None:
        return initializing
    paths = resolve_run(ref, runs_dir)
    broken = gitops.repository_problem(paths.root)
    if broken is not None:
        return _broken_report(paths, broken)
    busy = None
    recovered: list[str] = []
    try:
        with run_lock(paths.lock, timeout=0.2):
            recovered = recover(paths)
            report = _report(paths)
    except RunBusy as exc:
        busy = exc.message
        report = _report(paths)  # read-only view while another process works
    report.update(busy=busy, recovered=recovered, roots=describe(), permissions=rules_for(paths.root.parent))
    if report["permissions"]:
        report["summary"] += "\n" + permissions_text(report["permissions"])
    report["summary"] += "\nfolders:\n" + describe_text()
    return report


def _initializing(ref, runs_dir) -> dict | None:
    """The report of a run whose `init` is still building it (no run folder yet)."""
    from harness.rundir import init_progress
    from harness.rundir.layout import RUN_ID_PATTERN, default_runs_dir

    ref = str(ref)
    by_id = Path(runs_dir) if runs_dir is not None else default_runs_dir()
    if not RUN_ID_PATTERN.match(ref) or (by_id / ref / "manifest.json").is_file():
        return None
    record = init_progress.running(by_id, ref)
    if record is None:
        return None
    text = init_progress.describe(record)
    record = dict(record, episodes_logged=init_progress.episodes_logged(record))
    return {"run": str(by_id / ref), "run_id": ref, "initializing": record, "manifest": None, "state": None,
            "committed": [], "git_head": None, "staged": [], "consistent": True, "problems": [], "busy": text,
            "recovered": [], "stop_requested": False,
            "summary": f"{text}\n(last update {record['updated']}; the run exists once iteration 0 is committed)"}


def _broken_report(paths: RunPaths, problem: str) -> dict:
    """What can be said about a run whose git repository is unusable (nothing is changed)."""
    repair = gitops.REPAIR_HINT.format(root=paths.root)
    try:
        manifest = read_record("manifest", paths.manifest)
    except UserError:
        manifest = None
    lines = [f"run {paths.run_id}  ({paths.root})", f"consistent: NO — {problem}", f"to repair: {repair}"]
    return {"run": str(paths.root), "run_id": paths.run_id, "manifest": manifest, "state": None, "committed": [],
            "git_head": None, "staged": [], "consistent": False, "problems": [problem], "repair": repair,
            "axis_share": None, "stop_requested": paths.stop_file.exists(), "busy": None, "recovered": [],
            "summary": "\n".join(lines)}


# Rewritten outside commits by design: the derived state (recovery marks a dead loop), the operator's steering.
_LEFT_BY_DESIGN = ("state.json", "goal.md")


def _left_uncommitted(paths: RunPaths, st: dict) -> list[str]:
    """What an ended run leaves uncommitted (while a run goes on, memory and understanding.md are
    committed with the next iteration; an ended one has none; an interrupted one is resumed)."""
    if st["status"] != "stopped" or st["stop_reason"] == "interrupted":
        return []
    left = [p for p in gitops.uncommitted(paths.root) if p not in _LEFT_BY_DESIGN]
    if not left:
        return []
    return [f"uncommitted after the run stopped: {', '.join(left[:5])}" + (" ..." if len(left) > 5 else "")
            + f"; commit them with `architect end {paths.run_id} --reason \"...\"`"]


def best_with_runner_up(paths: RunPaths, best: dict | None, rows: list[dict]) -> dict | None:
    """state.best with the paired verdict against the runner-up by the same rule
    (`runner_up`: iteration, score, verdict — the best's against it, as `verdict_of` says;
    `near_tie`: indistinguishable from it)."""
    if best is None:
        return None
    view = _runner_up_view(paths)
    runner = (view or {}).get("runner_up")
    if runner is None:
        return dict(best, near_tie=False, runner_up=None)
    score = next(((r.get("primary") or {}).get("mean") for r in ledger.committed(rows)
                  if r["iteration"] == runner["iteration"]), None)
    return dict(best, near_tie=view["near_tie"],
                runner_up={"iteration": runner["iteration"], "score": score, "verdict": runner["verdict"],
                           "verdict_of": f"iteration {best['iteration']} against iteration {runner['iteration']}"})


def _runner_up_view(paths: RunPaths) -> dict | None:
    """best_view's runner-up part, remembered in the user's cache per run folder and ledger
    content (the paired test reads every episode of both: status is called every iteration)."""
    import hashlib
    import json

    from harness.fileio import write_json_atomic
    from harness.roots import cache_home

    key = hashlib.sha256(str(paths.root.resolve()).encode() + b"\0" + paths.ledger.read_bytes()).hexdigest()[:32]
    memo = cache_home() / "status" / f"{key}.json"
    try:
        return json.loads(memo.read_text())["view"]
    except (OSError, ValueError, KeyError):
        pass
    from harness.rundir.evidence import best_view

    view = best_view(paths, baseline=False)
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(memo, {"view": view})
    except OSError:
        pass  # an unwritable cache costs time, never the answer
    return view


def runner_up_text(best: dict) -> str:
    r = best.get("runner_up")
    if r is None:
        return ""
    if best["near_tie"]:
        return f"; a near-tie with the runner-up, iteration {r['iteration']} score {r['score']} (indistinguishable)"
    return f"; {r['verdict']} than the runner-up, iteration {r['iteration']} score {r['score']}"


def _report(paths: RunPaths) -> dict:
    manifest = read_record("manifest", paths.manifest)
    st = state.read(paths)
    rows = ledger.read_rows(paths.ledger)
    problems = consistency(paths) + _left_uncommitted(paths, st)
    committed = [r["iteration"] for r in ledger.committed(rows)]
    staged = sorted(p.name for p in paths.staging.iterdir() if not p.name.startswith(".")) if paths.staging.exists() else []
    share = ledger.axis_share(rows)
    best = st["best"] = best_with_runner_up(paths, st["best"], rows)
    cap = goal.iteration_cap(paths, manifest)
    profiles = manifest["profiles"]
    seed = manifest.get("seed_candidate") or manifest["executor"]
    lines = [
        f"run {paths.run_id}: {manifest['variant']} on {seed}"
        + (f" (executor {manifest['executor']})" if seed != manifest["executor"] else "") + f"  ({paths.root})",
        f"tiers: performance {profiles['performance_tier']}"
        + (f" ({manifest['caps']['eval_episodes']} episodes, round-robin over its groups)"
           if manifest["caps"].get("eval_episodes") else "")
        + ", sealed holdout for certification " + (profiles.get("holdout_tier") or "none" if "holdout_tier" in profiles
                                                   else "(not recorded by this run: derived when certifying)"),
        f"status: {st['status']}" + (f" (last stop: {st['stop_reason']})" if st["stop_reason"] else ""),
        f"iterations committed: {len(committed) - 1} of cap {cap['cap']}"
        + (f" (goal.md; the run's cap is {cap['manifest']})" if cap["cap"] < cap["manifest"] else "")
        + f" (next: {st['next_iteration']}); attempts: {st['attempts']}; consecutive skips: "
        f"{st['consecutive_skips']} of {manifest['caps']['max_consecutive_skips']}",
        (f"best: iteration {best['iteration']} score {best['score']}"
         + (f" ({best['vs_parent']} than its parent)" if best.get("vs_parent") in ("better", "worse") else
            " (indistinguishable from its parent: best by the mean, which AFlow's accept rule, 'better' only, "
            "does not count as accepted)" if best.get("vs_parent") else "") + runner_up_text(best))
        if best else "best: -",
        "staged: " + (", ".join(staged) if staged else "nothing"),
        "consistent: yes" if not problems else "consistent: NO — " + "; ".join(problems),
    ]
    if share:
        lines.append(f"most-used axis: {' = '.join(share['tied'])} ({share['share']:.0%}"
                     + (" each)" if len(share["tied"]) > 1 else ")"))
    used = stopping.spent(rows)
    caps = manifest["caps"]
    lines.append(f"spent: ${used['cost_usd']:.4f}" + (f" of ${caps['max_cost_usd']:.4f}" if caps.get("max_cost_usd") is not None else "")
                 + f", {used['tokens']} tokens" + (f" of {caps['max_tokens']}" if caps.get("max_tokens") is not None else ""))
    cached = sum(r.get("cached_episodes") or 0 for r in rows)
    if cached:
        lines.append(f"cached: {cached} evaluated episodes were served from the result cache (wall times omit them)")
    stop = stopping.due(paths, manifest, rows)
    if stop is not None and st["status"] != "stopped":  # (a stopped run's reason is on its status line)
        lines.append(f"stop due: {stop['reason']} — end the loop with `architect end {paths.run_id}`")
    if paths.stop_file.exists():
        lines.append("STOP file present: the loop stops after the current iteration")
    return {"spent": used, "stop": stop, "stop_file_text": stopping.stop_file_text(paths) if paths.stop_file.exists() else None,
            "run": str(paths.root), "run_id": paths.run_id, "manifest": manifest, "state": st,
            "tier": profiles["performance_tier"], "holdout_tier": profiles.get("holdout_tier"), "iteration_cap": cap,
            "committed": committed, "git_head": gitops.head(paths.root), "staged": staged,
            "best_rule": ledger.BEST_RULE, "consistent": not problems, "problems": problems, "axis_share": share,
            "stop_requested": paths.stop_file.exists(), "summary": "\n".join(lines)}

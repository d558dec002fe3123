"""`architect commit` and `architect discard`: the two ways an attempt ends.

Both are journaled (see recover.py): a kill -9 at any point either finishes
the step on the next open or rolls it back, never half of it."""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

from harness.errors import UserError
from harness.rundir import gitops, journal, ledger, proposal, state, tiers, whitelist
from harness.fileio import read_json, write_json_atomic, write_text_atomic
from harness.rundir.layout import SLOTS_DIR
from harness.rundir.records import now_iso
from harness.rundir.run import Run

CHECK_FILE = "check.json"
SLOT_TRAILER = "Architect-Slot"


def text_diff(parent: Path, child: Path) -> str:
    """Unified diff over every file of the two candidate folders."""
    a, b = whitelist.candidate_files(parent), whitelist.candidate_files(child)
    chunks = []
    for path in sorted(set(a) | set(b)):
        old, new = a.get(path), b.get(path)
        if old == new:
            continue
        try:
            old_lines = old.decode("utf-8").splitlines(keepends=True) if old is not None else []
            new_lines = new.decode("utf-8").splitlines(keepends=True) if new is not None else []
        except UnicodeDecodeError:
            chunks.append(f"Binary file {path} differs\n")
            continue
        diff = difflib.unified_diff(old_lines, new_lines,
                                    "/dev/null" if old is None else f"a/{path}",
                                    "/dev/null" if new is None else f"b/{path}")
        chunks.append("".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff))
    return "".join(chunks)


def structured_patch(parent: Path, child: Path) -> dict:
    from harness.canvas.patch import diff_graphs

    load = lambda folder: read_json(folder / "graph.json", "graph")
    return diff_graphs(load(parent), load(child))


def readiness(run: Run, staging: Path) -> list[str]:
    """Why the staged candidate may not be committed yet (empty: it may)."""
    digest = tiers.content_hash(staging / "candidate")
    missing = []
    try:
        check = read_json(staging / CHECK_FILE)
    except (OSError, ValueError):
        check = None
    if check is None:
        missing.append("not checked: run `architect check`")
    elif check.get("candidate_hash") != digest:
        missing.append("the candidate changed after `architect check`: check again")
    elif check.get("violations"):
        missing.append(f"check found {len(check['violations'])} violation(s)")
    for kind, label in (("smoke", "smoke"), ("eval", "evaluate")):
        verdict = tiers.read_verdict(staging / kind)
        if verdict is None:
            missing.append(f"no {kind} result: run `architect {label}`")
        elif verdict.get("candidate_hash") != digest:
            missing.append(f"the candidate changed after `architect {label}`: run it again")
        elif not verdict.get("passed"):
            missing.append(f"{kind} failed: " + "; ".join(verdict.get("reasons") or []))
    missing += [p["message"] for p in proposal.problems(staging / "proposal.md")]
    return missing


def _row(run: Run, staging: Path, *, status: str, iteration: int, description: str, reason: str | None) -> dict:
    meta = run.staging_meta(staging)
    front, _ = proposal.salvage(staging / "proposal.md")
    smoke = tiers.read_verdict(staging / "smoke")
    evaluation = tiers.read_verdict(staging / "eval")
    axes = front.get("axes") if isinstance(front.get("axes"), list) else []
    return {
        "attempt": len(run.rows()),
        "iteration": iteration,
        "slot": meta.get("slot"),
        "parent": meta["parent"],
        "status": status,
        "reason": reason,
        "smoke": {"passed": bool(smoke["passed"]), "reasons": list(smoke.get("reasons") or [])} if smoke else None,
        "primary": evaluation["primary"] if evaluation and evaluation.get("primary") else None,
        **tiers.combined(smoke, evaluation),
        "description": description,
        "axes": [str(a) for a in axes],
        "candidate_hash": tiers.content_hash(staging / "candidate") if (staging / "candidate").exists() else None,
        "time": now_iso(),
    }


def vs_parent(run: Run, parent: int, staging: Path) -> dict | None:
    """The paired test of the staged evaluation against its parent's (primary metric)."""
    from harness.evaluation.compare import verdict_summary
    from harness.rundir.records import read_iteration_metrics, read_metrics

    parent_metrics = read_iteration_metrics(run.paths, parent)
    child_metrics = read_metrics(staging / "eval" / "metrics.json")
    if parent_metrics is None or child_metrics is None:
        return None
    summary = verdict_summary(parent_metrics, child_metrics)
    return {k: summary[k] for k in ("verdict", "test", "shared", "delta", "p_value", "gained", "lost")}


def behaviour_vs_parent(run: Run, parent: int, staging: Path) -> dict | None:
    """Whether the staged evaluation acted exactly as its parent's (harness.evaluation.behaviour)."""
    from harness.evaluation.behaviour import same_behaviour
    from harness.rundir.records import read_iteration_metrics, read_metrics

    parent_metrics = read_iteration_metrics(run.paths, parent)
    child_metrics = read_metrics(staging / "eval" / "metrics.json")
    if parent_metrics is None or child_metrics is None:
        return None
    return same_behaviour(parent_metrics, run.paths.iteration(parent) / "eval", child_metrics, staging / "eval")


def commit(run: Run, staging: Path, description: str | None = None, extra: dict | None = None) -> dict:
    """`extra`: more ledger fields (optional ones of ledger_row.schema.json, e.g. `shaper`)."""
    blockers = readiness(run, staging)
    if blockers:
        raise UserError(f"cannot commit {staging.name}: " + "; ".join(blockers), details=blockers)
    meta = run.staging_meta(staging)
    front, body = proposal.read(staging / "proposal.md")
    lines = str(description or front.get("description") or "").strip().splitlines()
    description = lines[0].strip() if lines else ""
    if not description or description == proposal.PLACEHOLDER:
        raise UserError("a one-line --description is required (or set `description` in proposal.md)")
    from harness.evaluation.behaviour import note

    same = behaviour_vs_parent(run, meta["parent"], staging)
    warning = note(same, meta["parent"]) if same else ""
    if warning:
        description = f"{description} [{warning}]"
    iteration = run.state()["next_iteration"]
    parent_dir = run.paths.iteration(meta["parent"]) / "candidate"
    proposal.write(staging / "proposal.md", dict(front, description=description, parent=meta["parent"]), body)
    write_json_atomic(staging / "patch.json", structured_patch(parent_dir, staging / "candidate"))
    write_text_atomic(staging / "diff.txt", text_diff(parent_dir, staging / "candidate"))
    tiers.record_final_path(staging, run.paths.iteration(iteration).relative_to(run.root).as_posix())
    row = dict(_row(run, staging, status="committed", iteration=iteration, description=description, reason=None),
               vs_parent=vs_parent(run, meta["parent"], staging), **(extra or {}))

    journal.begin(run.paths, {
        "op": "commit", "iteration": iteration, "staging": staging.relative_to(run.root).as_posix(),
        "ledger_before": run.paths.ledger.read_text(encoding="utf-8"),
        "state_before": run.paths.state.read_text(encoding="utf-8"),
    })
    run.paths.iterations.mkdir(exist_ok=True)
    staging.rename(run.paths.iteration(iteration))
    ledger.append_row(run.paths.ledger, row)
    state.refresh(run.paths)
    sha = gitops.commit_iteration(run.root, iteration, f"iteration {iteration}: {description}", ["."])
    journal.end(run.paths)
    _attempt_ended(run)
    return dict(row, commit=sha, path=str(run.paths.iteration(iteration)), identical_to_parent=same,
                warning=warning or None)


def _attempt_ended(run: Run) -> None:
    from harness.variant_api import discover_variants

    variant = discover_variants().get(run.manifest.get("variant"))
    if variant is not None:
        variant.end_attempt(run.paths)


def lost_slot(staging: Path, meta: dict) -> bool:
    """A parallel slot whose performance evaluation passed for its current
    content: discarding it means another slot won, not that it failed."""
    if not meta.get("slot"):
        return False
    verdict = tiers.read_verdict(staging / "eval")
    return bool(verdict and verdict.get("passed")
                and verdict.get("candidate_hash") == tiers.content_hash(staging / "candidate"))


def _archive_target(run: Run, staging: Path, attempt: int) -> Path:
    target = run.root / SLOTS_DIR / staging.name
    return target.with_name(f"{staging.name}-attempt{attempt}") if target.exists() else target


def discard(run: Run, staging: Path, reason: str) -> dict:
    """Drop an attempt. A failed one is removed (it counts as a skip); a losing
    slot is archived under slots/<name>/ with its patch and diff against its
    parent and committed (not a skip)."""
    reason = " ".join(reason.split())
    if not reason:
        raise UserError("--reason must say why the attempt is discarded")
    meta = run.staging_meta(staging)
    front, unreadable = proposal.salvage(staging / "proposal.md")  # discard works whatever proposal.md holds
    if unreadable:
        reason = f"{reason} (proposal.md unreadable: {' '.join(unreadable.split())[:300]})"
    description = front.get("description") if front.get("description") != proposal.PLACEHOLDER else ""
    row = _row(run, staging, status="discarded", iteration=meta["iteration"],
               description=str(description or ""), reason=reason)
    archive = None
    if lost_slot(staging, meta):
        archive = _archive_target(run, staging, row["attempt"])
        parent_dir = run.paths.iteration(meta["parent"]) / "candidate"
        write_json_atomic(staging / "patch.json", structured_patch(parent_dir, staging / "candidate"))
        write_text_atomic(staging / "diff.txt", text_diff(parent_dir, staging / "candidate"))
        tiers.record_final_path(staging, archive.relative_to(run.root).as_posix())
        row = dict(row, lost_slot=True, archived=archive.relative_to(run.root).as_posix())
    journal.begin(run.paths, {"op": "discard", "staging": staging.relative_to(run.root).as_posix(), "row": row})
    ledger.append_row(run.paths.ledger, row)
    if archive is not None:
        archive.parent.mkdir(exist_ok=True)
        staging.rename(archive)
    else:
        shutil.rmtree(staging)
    state.refresh(run.paths)
    if archive is not None:
        gitops.commit(run.root, f"slot {staging.name} archived: {reason}", (SLOT_TRAILER, meta["iteration"]), ["."])
    journal.end(run.paths)
    _attempt_ended(run)
    return row

"""Bring a run back to a consistent state after a crash (kill -9 at any point).

Invariant: git HEAD is the truth about committed iterations. An iteration whose
commit never landed is rolled back into staging; one whose commit landed has
its bookkeeping finished; the state file is re-derived from the ledger."""

from __future__ import annotations

import shutil

from harness.errors import UserError
from harness.rundir import gitops, journal, ledger, state
from harness.fileio import write_text_atomic
from harness.rundir.layout import RunPaths


def recover(paths: RunPaths) -> list[str]:
    """Repair the run in place; returns what was done (for status/progress)."""
    actions: list[str] = []
    gitops.settle(paths.root)
    _repair_ledger(paths, actions)
    entry = journal.pending(paths)
    if entry is not None:
        if entry.get("op") == "commit":
            actions.append(_recover_commit(paths, entry))
        elif entry.get("op") == "discard":
            actions.append(_recover_discard(paths, entry))
        journal.end(paths)
    _restore_committed_tree(paths, actions)
    for partial in paths.staging.glob(".tmp-*") if paths.staging.exists() else []:
        shutil.rmtree(partial, ignore_errors=True)  # a `stage` killed before its final rename
    st = None
    try:
        st = state.read(paths)
    except Exception:
        actions.append("rebuilt state.json from the ledger")
    if st is not None and st["status"] == "running":
        # The lock was free, so the process that set "running" is gone.
        state.refresh(paths, status="stopped", stop_reason="interrupted")
        actions.append("the previous loop process died: marked interrupted")
    elif st is None or state.drift(paths):
        state.refresh(paths)
    return actions


def _recover_commit(paths: RunPaths, entry: dict) -> str:
    n = entry["iteration"]
    if gitops.head_iteration(paths.root) == n:
        return f"iteration {n} was committed; finished its bookkeeping"
    gitops.reset_index(paths.root)
    moved = paths.iteration(n)
    staging = paths.root / entry["staging"]
    if moved.exists():
        if staging.exists():
            shutil.rmtree(moved)
        else:
            staging.parent.mkdir(parents=True, exist_ok=True)
            moved.rename(staging)
    write_text_atomic(paths.ledger, entry["ledger_before"])
    write_text_atomic(paths.state, entry["state_before"])
    return f"iteration {n} was not committed: rolled back to {entry['staging']}"


def _recover_discard(paths: RunPaths, entry: dict) -> str:
    row = entry["row"]
    rows = ledger.read_rows(paths.ledger)
    if not any(r["attempt"] == row["attempt"] for r in rows):
        ledger.append_row(paths.ledger, row)
    staging = paths.root / entry["staging"]
    if staging.exists() and row.get("archived"):
        (paths.root / row["archived"]).parent.mkdir(exist_ok=True)
        staging.rename(paths.root / row["archived"])
    elif staging.exists():
        shutil.rmtree(staging)
    return f"finished discarding attempt {row['attempt']} ({entry['staging']})"


def _repair_ledger(paths: RunPaths, actions: list[str]) -> None:
    """A missing or damaged ledger is restored from the last commit (rows of
    attempts discarded since then are lost; the iterations are not)."""
    try:
        ledger.read_rows(paths.ledger)
        if paths.ledger.exists():
            return
    except UserError:
        pass
    committed = gitops.git(paths.root, "show", "HEAD:ledger.jsonl", check=False) if gitops.head(paths.root) else ""
    write_text_atomic(paths.ledger, committed)
    actions.append("ledger.jsonl was missing or damaged: restored from the last commit")


def _restore_committed_tree(paths: RunPaths, actions: list[str]) -> None:
    """iterations/ must equal HEAD: drop anything uncommitted under it (e.g. a
    rerun killed before its commit)."""
    if gitops.head(paths.root) is None:
        return
    dirty = gitops.git(paths.root, "status", "--porcelain", "--", "iterations").strip()
    if dirty:
        gitops.git(paths.root, "checkout", "-q", "HEAD", "--", "iterations", check=False)
        gitops.git(paths.root, "clean", "-fdq", "--", "iterations")
        actions.append("dropped uncommitted changes under iterations/")

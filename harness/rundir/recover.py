"""Bring a run back to a consistent state after a crash (kill -9 at any point).

Invariant: git HEAD is the truth about committed iterations. An iteration whose
commit never landed is rolled back into staging; one whose commit landed has
its bookkeeping finished; the state file is re-derived from the ledger. A
journal that is damaged or incomplete is not trusted: the run is reconciled
with HEAD instead (uncommitted iteration folders go back to staging, a ledger
that disagrees with HEAD is restored from it). A run whose own git repository
is missing or damaged cannot be recovered automatically: RunInconsistent."""

from __future__ import annotations

import shutil

from harness.errors import UserError
from harness.rundir import gitops, journal, ledger, state
from harness.rundir.consistency import consistency
from harness.fileio import write_text_atomic
from harness.rundir.layout import RunPaths


class RunInconsistent(UserError):
    """The run disagrees with itself in a way recovery cannot repair; nothing may change it."""

    def __init__(self, message: str):
        super().__init__(message, exit_code=4)


def refuse_if_broken(paths: RunPaths) -> None:
    """RunInconsistent if the run's own git repository is unusable."""
    problem = gitops.repository_problem(paths.root)
    if problem is not None:
        raise RunInconsistent(f"run {paths.run_id} is not consistent: {problem}; nothing was changed. To repair: "
                              + gitops.REPAIR_HINT.format(root=paths.root))


def recover(paths: RunPaths) -> list[str]:
    """Repair the run in place; returns what was done (for status/progress)."""
    refuse_if_broken(paths)
    actions: list[str] = []
    gitops.settle(paths.root)
    _repair_ledger(paths, actions)
    entry = journal.pending(paths)
    if entry is not None:
        if entry.get("op") == "commit":
            actions.append(_recover_commit(paths, entry))
        elif entry.get("op") == "discard":
            actions.append(_recover_discard(paths, entry))
        else:
            gitops.reset_index(paths.root)
            actions.append(f"ignored an unusable commit journal ({entry.get('damage')}); reconciled the run "
                           "with git HEAD")
        journal.end(paths)
    _stage_uncommitted_iterations(paths, actions)
    _reconcile_ledger(paths, actions)
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


def finish_cut_short(paths: RunPaths) -> list[str]:
    """Roll back or finish a commit or discard that this process was cut short in (Ctrl-C,
    SIGTERM, an error: its journal is still pending), as recovery after a crash would, so
    that the commit a stopping loop makes next holds no half iteration. Call under the run lock."""
    return recover(paths) if journal.pending(paths) is not None else []


def recover_or_refuse(paths: RunPaths) -> list[str]:
    """`recover`, then RunInconsistent if the run still disagrees with itself
    (the caller is about to change it)."""
    actions = recover(paths)
    problems = consistency(paths)
    if problems:
        raise RunInconsistent(f"run {paths.run_id} is not consistent after recovery: {'; '.join(problems)[:500]}; "
                              f"nothing more was changed. Run `architect status {paths.run_id}` for details, repair "
                              "what it names (or restore the run from a backup) and try again")
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


def _head_ledger(paths: RunPaths) -> str:
    return gitops.git(paths.root, "show", "HEAD:ledger.jsonl", check=False) if gitops.head(paths.root) else ""


def _repair_ledger(paths: RunPaths, actions: list[str]) -> None:
    """A missing or damaged ledger is restored from the last commit (rows of
    attempts discarded since then are lost; the iterations are not)."""
    try:
        ledger.read_rows(paths.ledger)
        if paths.ledger.exists():
            return
    except UserError:
        pass
    write_text_atomic(paths.ledger, _head_ledger(paths))
    actions.append("ledger.jsonl was missing or damaged: restored from the last commit")


def _reconcile_ledger(paths: RunPaths, actions: list[str]) -> None:
    """A ledger whose committed iterations are not git's (e.g. emptied) is restored from HEAD."""
    in_git = gitops.committed_iterations(paths.root)
    in_ledger = [r["iteration"] for r in ledger.committed(ledger.read_rows(paths.ledger))]
    if in_ledger != in_git:
        write_text_atomic(paths.ledger, _head_ledger(paths))
        actions.append(f"ledger.jsonl listed committed iterations {in_ledger[:10]} but git has {in_git[:10]}: "
                       "restored it from the last commit")


def _stage_uncommitted_iterations(paths: RunPaths, actions: list[str]) -> None:
    """An iterations/<n> folder git does not know (a commit that never landed,
    with no usable journal) is moved back to staging, never deleted."""
    if not paths.iterations.is_dir():
        return
    committed = set(gitops.committed_iterations(paths.root))
    for folder in sorted(paths.iterations.iterdir()):
        if not folder.name.isdigit() or int(folder.name) in committed:
            continue
        if not folder.is_dir():
            folder.unlink()
            continue
        target = paths.staging / folder.name
        suffix = 1
        while target.exists():
            target = paths.staging / f"{folder.name}-recovered{suffix}"
            suffix += 1
        paths.staging.mkdir(parents=True, exist_ok=True)
        folder.rename(target)
        actions.append(f"iterations/{folder.name} was never committed: moved back to {target.relative_to(paths.root)}")


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

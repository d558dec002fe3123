"""Whether a run agrees with itself: git history, ledger, state and the
iterations/ folders (read by `architect status`, and by recovery before it
lets a command change the run)."""

from __future__ import annotations

from harness.rundir import gitops, journal, ledger, state
from harness.rundir.layout import RunPaths


def consistency(paths: RunPaths) -> list[str]:
    """Disagreements between git history, ledger, state and folders (empty: consistent)."""
    problems = []
    in_git = gitops.committed_iterations(paths.root)
    rows = ledger.read_rows(paths.ledger)
    in_ledger = [r["iteration"] for r in ledger.committed(rows)]
    folders = sorted(int(p.name) for p in paths.iterations.iterdir() if p.name.isdigit()) if paths.iterations.exists() else []
    if in_git != list(range(len(in_git))):
        problems.append(f"git history iterations are not 0..n in order: {in_git}")
    if in_ledger != in_git:
        problems.append(f"ledger says committed {in_ledger}, git history says {in_git}")
    if folders != sorted(in_git):
        problems.append(f"iterations/ holds {folders}, git history says {in_git}")
    problems += state.drift(paths)
    if journal.pending(paths) is not None:
        problems.append("an interrupted commit/discard is pending recovery (.journal.json)")
    return problems

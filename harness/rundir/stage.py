"""`architect stage`: copy a committed candidate into a fresh staging folder."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from harness.errors import UserError
from harness.rundir import proposal
from harness.fileio import write_json_atomic
from harness.rundir.layout import STAGING_NAME
from harness.rundir.records import now_iso
from harness.rundir.run import Run


def stage(run: Run, parent: int | None = None, slot: str | None = None, replace: bool = False) -> Path:
    committed = run.committed_iterations()
    parent = run.best_iteration() if parent is None else parent
    if parent not in committed:
        raise UserError(f"--parent {parent}: no such committed iteration in {run.paths.run_id} (have {committed})")
    iteration = run.state()["next_iteration"]
    dest = run.paths.staging_dir(iteration, slot)
    if not STAGING_NAME.match(dest.name):
        raise UserError(f"--slot {slot!r}: use letters, digits and _ only")
    if dest.exists():
        if not replace:
            raise UserError(f"{dest} is already staged: commit or discard it, or stage again with --replace")
        shutil.rmtree(dest)
    # Build beside the target, then rename: a staging folder is whole or absent.
    tmp = run.paths.staging / f".tmp-{dest.name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    shutil.copytree(run.paths.iteration(parent) / "candidate", tmp / "candidate",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    write_json_atomic(tmp / "stage.json", {"iteration": iteration, "slot": slot, "parent": parent, "created": now_iso()})
    proposal.write(tmp / "proposal.md", *proposal.template(parent))
    tmp.rename(dest)
    return dest


def clear_stale(run: Run) -> list[str]:
    """Remove every staging folder (the loop's own leftovers after a crash)."""
    removed = []
    if run.paths.staging.exists():
        for entry in sorted(run.paths.staging.iterdir()):
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
            removed.append(entry.name)
    return removed

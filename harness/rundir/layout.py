"""Where everything of a run lives, and how a RUN argument resolves to a folder."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from harness.errors import UserError
from harness.rundir.lock import RunBusy

RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
SLOTS_DIR = "slots"  # KDLoop slots that lost to the one committed, archived (harness.rundir.commit)
STAGING_NAME = re.compile(r"^(?P<iteration>\d+)(?:-(?P<slot>[A-Za-z0-9_]+))?$")

# Never committed: scratch space, the lock and the crash journal.
GITIGNORE = "staging/\n.lock\n.lock.pid\n.journal.json\n*.tmp\nSTOP\n"


def default_runs_dir() -> Path:
    """`$ARCHITECT_RUNS_DIR` if set, else `./runs` (harness.roots)."""
    from harness.roots import runs_dir

    return runs_dir()


@dataclass(frozen=True)
class RunPaths:
    root: Path

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    @property
    def state(self) -> Path:
        return self.root / "state.json"

    @property
    def ledger(self) -> Path:
        return self.root / "ledger.jsonl"

    @property
    def goal(self) -> Path:
        return self.root / "goal.md"

    @property
    def understanding(self) -> Path:
        return self.root / "understanding.md"

    @property
    def memory(self) -> Path:
        return self.root / "memory"

    @property
    def iterations(self) -> Path:
        return self.root / "iterations"

    @property
    def staging(self) -> Path:
        return self.root / "staging"

    @property
    def stop_file(self) -> Path:
        return self.root / "STOP"

    @property
    def lock(self) -> Path:
        return self.root / ".lock"

    @property
    def journal(self) -> Path:
        return self.root / ".journal.json"

    @property
    def run_id(self) -> str:
        return self.root.name

    def iteration(self, n: int) -> Path:
        return self.iterations / str(n)

    def staging_lock(self, staging: Path) -> Path:
        """Beside the folder, not in it: the folder moves on commit."""
        return self.staging / f".{staging.name}.lock"

    def staging_dir(self, iteration: int, slot: str | None = None) -> Path:
        return self.staging / (f"{iteration}-{slot}" if slot else str(iteration))


class RunMissing(UserError, LookupError):
    """No run folder, and no run id under the runs folder, at the reference given."""


def resolve_run(ref: str | os.PathLike, runs_dir: str | os.PathLike | None = None) -> RunPaths:
    """RUN is a path to a run folder or a run id under the runs directory."""
    candidate = Path(ref)
    if not (candidate / "manifest.json").is_file():
        by_id = Path(runs_dir) if runs_dir is not None else default_runs_dir()
        if RUN_ID_PATTERN.match(str(ref)) and (by_id / str(ref) / "manifest.json").is_file():
            candidate = by_id / str(ref)
        else:
            _refuse_initializing(by_id, str(ref))
            raise RunMissing(
                f"no run at {ref!r}: expected a run folder holding manifest.json or a run id under {by_id}/ "
                f"(the runs folder: --runs-dir, else $ARCHITECT_RUNS_DIR, else ./runs); create it with "
                f"`architect init VARIANT EXECUTOR --run-id {ref}` (a SHAPER run: `architect shaper init SEED "
                f"--run-id {ref}`); {_runs_there(by_id)}"
            )
    return RunPaths(candidate.resolve())


def _runs_there(runs_dir: Path, shown: int = 20) -> str:
    ids = sorted(p.parent.name for p in runs_dir.glob("*/manifest.json")) if runs_dir.is_dir() else []
    if not ids:
        return f"{runs_dir}/ holds no run"
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return f"runs in {runs_dir}/: {', '.join(ids[:shown])}{more}"


def _refuse_initializing(runs_dir: Path, run_id: str) -> None:
    from harness.rundir import init_progress

    if RUN_ID_PATTERN.match(run_id) and (record := init_progress.running(runs_dir, run_id)) is not None:
        raise RunBusy(init_progress.describe(record) + "; it is not a run until iteration 0 is committed: "
                      f"wait (`architect status {run_id}` shows what it is doing), do not init it again", exit_code=3)


def resolve_staging(paths: RunPaths, staging: str | os.PathLike) -> Path:
    """A STAGING argument: the path `stage` printed, or just its folder name."""
    given = Path(staging)
    folder = given if given.is_absolute() or given.exists() else paths.staging / given
    folder = folder.resolve()
    if folder.parent != paths.staging.resolve() or not STAGING_NAME.match(folder.name):
        raise UserError(f"{staging}: not a staging folder of run {paths.run_id} (expected {paths.staging}/<iteration>[-<slot>])")
    if not (folder / "candidate").is_dir():
        raise UserError(f"{folder}: no staged candidate here (run `architect stage` first)")
    return folder

"""An opened run: its manifest, ledger and state, under the run lock."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from harness.errors import UserError
from harness.rundir import ledger, state
from harness.fileio import read_json
from harness.rundir.layout import RunPaths, resolve_run, resolve_staging
from harness.rundir.lock import run_lock
from harness.rundir.records import read_record


class Run:
    def __init__(self, paths: RunPaths):
        self.paths = paths
        self.manifest = read_record("manifest", paths.manifest)
        self.rerun_episodes: int | None = None  # this command's cap on the rerun tier (certify --rerun-episodes)

    @property
    def root(self) -> Path:
        return self.paths.root

    def rows(self) -> list[dict]:
        return ledger.read_rows(self.paths.ledger)

    def state(self) -> dict:
        return state.read(self.paths)

    def executor(self):
        """The run's executor, with the tiers its manifest adds (`tiers:`) beside its profile's."""
        from harness.executor_api import load_executor

        return load_executor(self.manifest["executor"]).with_tiers(self.manifest.get("tiers"))

    def staging(self, ref: str | os.PathLike) -> Path:
        return resolve_staging(self.paths, ref)

    def staging_meta(self, staging: Path) -> dict:
        try:
            return read_json(staging / "stage.json", "stage record")
        except UserError as exc:
            raise UserError(f"{exc.message}; stage again") from None

    def best_iteration(self) -> int:
        best = ledger.best_row(self.rows())
        return best["iteration"] if best else 0

    def committed_iterations(self) -> list[int]:
        return [r["iteration"] for r in ledger.committed(self.rows())]

    def graph_hashes(self) -> set[str]:
        """Graph hashes of every committed iteration (what was already evaluated)."""
        from harness.canvas.graph import read_json_file
        from harness.canvas.hashing import graph_hash

        return {graph_hash(read_json_file(self.paths.iteration(n) / "candidate" / "graph.json"))
                for n in self.committed_iterations()}

    def tier(self, kind: str) -> tuple[str, int | None]:
        """(tier name, episode count override) for kind "smoke", "eval" or "rerun" (the
        tier of certification's reruns and `architect rerun`: the profile's `rerun_tier`,
        else the performance tier; `rerun_episodes` when set, else the performance tier's
        episode cap, applies to it)."""
        from harness.rundir.tiers import episodes_override

        profiles = self.manifest["profiles"]
        if kind == "smoke":
            name = profiles["smoke_tier"]
        elif kind == "rerun":
            name = profiles.get("rerun_tier") or profiles["performance_tier"]
        else:
            name = profiles["performance_tier"]
        if kind == "rerun" and self.rerun_episodes is not None:
            return name, self.rerun_episodes
        return name, episodes_override(self.manifest["caps"], "smoke" if kind == "smoke" else "eval")

    def backend(self) -> dict:
        """The manifest's evaluation backend as `evaluate` keyword arguments."""
        setting = self.manifest.get("evaluation") or {}
        return {"backend": setting.get("backend"), "ray_address": setting.get("ray_address")}

    def evaluate_staging(self, staging: Path, kind: str, progress: bool = False) -> dict:
        """Smoke ("smoke") or performance ("eval") evaluation into the staging folder; the workers
        fork from the run's warm forkserver, kept across this run's commands."""
        from harness.rundir.tiers import run_tier

        name, episodes = self.tier(kind)
        return run_tier(staging / "candidate", staging / kind, kind=kind, tier=name, episodes=episodes,
                        progress=progress, evaluation=self.manifest.get("evaluation"),
                        tiers=self.manifest.get("tiers"), warm_scope=str(self.root))


@contextmanager
def open_run(ref: str | os.PathLike, runs_dir: str | os.PathLike | None = None) -> Iterator[Run]:
    """Lock the run, finish or roll back whatever a killed process left, and yield it."""
    from harness.rundir.recover import recover_or_refuse

    paths = resolve_run(ref, runs_dir)
    with run_lock(paths.lock):
        recover_or_refuse(paths)
        yield Run(paths)


@contextmanager
def open_staging(ref: str | os.PathLike, staging: str | os.PathLike,
                 runs_dir: str | os.PathLike | None = None) -> Iterator[tuple[Run, Path]]:
    """For check / smoke / evaluate, which only write inside one staging folder:
    lock that folder, not the run, so parallel slots evaluate side by side."""
    from harness.rundir.recover import refuse_if_broken

    paths = resolve_run(ref, runs_dir)
    refuse_if_broken(paths)
    folder = resolve_staging(paths, staging)
    with run_lock(paths.staging_lock(folder), what=f"staging {folder.name}"):
        yield Run(paths), folder


@contextmanager
def open_run_staging(ref: str | os.PathLike, staging: str | os.PathLike,
                     runs_dir: str | os.PathLike | None = None) -> Iterator[tuple[Run, Path]]:
    """For commit / discard: the run lock, then the staging folder's lock."""
    with open_run(ref, runs_dir) as run:
        folder = run.staging(staging)
        with run_lock(run.paths.staging_lock(folder), what=f"staging {folder.name}"):
            yield run, folder

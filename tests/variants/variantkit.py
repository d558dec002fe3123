"""Helpers of the variant tests.

A synthetic run folder laid out exactly as docs/contracts.md describes it, for
unit tests of the variant helpers that only read run files (the end-to-end
tests use real runs made by `architect init`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from click.testing import CliRunner
from skillpack import ARCHITECT, command_lines, split, substitute

from harness.evaluation.records import episode_record, summarize
from harness.rundir import state
from harness.rundir.layout import RunPaths
from harness.rundir.records import check_record, write_record

SHA = "0" * 64


def metrics_record(successes: list[bool], metric: str = "success") -> dict:
    """A metrics.json that passes schemas/metrics.schema.json, built by the harness's own summarizer."""
    episodes = [episode_record({"episode_id": str(i)}, {"success": ok, "termination": "success" if ok else "max_steps"})
                for i, ok in enumerate(successes)]
    return {"schema_version": 1, "tier": "search", "executor": "babyai", "oracle": False,
            "candidate": {"path": "candidate/graph.json", "hash": SHA, "graph_hash": SHA},
            **summarize(episodes, metric, []), "cached": 0, "workers": 1, "in_flight": 1, "wall_seconds": 0.0,
            "graph": {}, "episodes": episodes}


class FakeRun:
    def __init__(self, root: Path, variant: str = "aflow"):
        self.root = root
        self.paths = RunPaths(root)
        root.mkdir(parents=True)
        (root / "memory").mkdir()
        (root / "staging").mkdir()
        manifest = {
            "schema_version": 1, "run_id": root.name, "variant": variant, "executor": "babyai",
            "seed_candidate_hash": "0" * 16, "seed": 7,
            "profiles": {"smoke_tier": "smoke", "performance_tier": "search", "primary_metric": "success",
                         "whitelist": ["graph.json"], "model_profile": None},
            "caps": {"max_iterations": 20, "max_consecutive_skips": 10},
            "created": "2026-01-01T00:00:00+00:00",
        }
        write_record("manifest", root / "manifest.json", manifest)
        self.rows: list[dict] = []
        self.next_iteration = 0
        self._write_state()

    def _write_state(self):
        state.write(self.paths, state.derive(self.rows))

    def _ledger(self):
        for row in self.rows:
            check_record("ledger_row", row, self.root / "ledger.jsonl")
        (self.root / "ledger.jsonl").write_text("".join(json.dumps(r) + "\n" for r in self.rows))

    def commit(self, successes: list[bool], *, parent=None, description="", axes=()):
        """A committed iteration whose per-episode successes are given."""
        it = self.next_iteration
        folder = self.paths.iteration(it)
        (folder / "eval").mkdir(parents=True)
        (folder / "candidate").mkdir()
        (folder / "candidate" / "graph.json").write_text(json.dumps({"name": f"g{it}", "nodes": {}}))
        mean = sum(successes) / len(successes)
        write_record("metrics", folder / "eval" / "metrics.json", metrics_record(successes))
        front = {"description": description or f"iteration {it}", "axes": list(axes), "parent": parent}
        (folder / "proposal.md").write_text("---\n" + json.dumps(front) + "\n---\nrationale of " + str(it) + "\n")
        self.rows.append(self._row(it, parent, "committed", description or f"iteration {it}", axes, mean))
        self.next_iteration += 1
        self._ledger()
        self._write_state()
        return it

    def discard(self, *, parent, description, axes=(), reason="check failed"):
        row = self._row(self.next_iteration, parent, "discarded", description, axes, None)
        row["reason"] = reason
        self.rows.append(row)
        self._ledger()

    def _row(self, it, parent, status, description, axes, mean):
        return {"attempt": len(self.rows), "iteration": it, "slot": None, "parent": parent, "status": status,
                "reason": None, "smoke": None,
                "primary": {"metric": "success", "mean": mean} if mean is not None else None,
                "description": description, "axes": list(axes), "time": "2026-01-01T00:00:00+00:00"}

    def staging(self, name: str, successes: list[bool] | None = None, description="a change",
                staged: str = "2026-01-01T00:00:00+00:00", parent: int = 0) -> Path:
        folder = self.paths.staging / name
        (folder / "candidate").mkdir(parents=True)
        (folder / "stage.json").write_text(json.dumps({"iteration": int(name.split("-")[0]), "created": staged,
                                                       "parent": parent}))
        (folder / "proposal.md").write_text(f"---\ndescription: {description}\naxes: []\nparent: {parent}\n---\nwhy\n")
        if successes is not None:
            (folder / "eval").mkdir()
            write_record("metrics", folder / "eval" / "metrics.json", metrics_record(successes))
        return folder



# --------------------------------------------------------------------------- end-to-end driver



class SkillDriver:
    """Runs the command lines a skill prescribes, exactly as written there.

    `run(skill, line, **values)` first asserts that `line` (placeholders
    included) is one of the `architect …` lines of `skill`, then substitutes
    the values and invokes the real CLI in-process; it returns the one JSON
    object printed on stdout."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.values: dict[str, str] = {"OPTIONS": ""}  # the loop's options: none unless a test sets them
        self.runner = CliRunner()
        self.trace: list[str] = []

    def lines(self, skill: str) -> list[str]:
        return command_lines(split(ARCHITECT / f"{skill}.md")[1])

    def run(self, skill: str, line: str, *, ok: bool = True, **values) -> dict:
        from harness.cli import main

        assert line in self.lines(skill), f"{skill}.md does not prescribe `{line}`"
        # staging= fills `$staging` when the line has it; otherwise the name is literal (STAGING, S_k, N, k)
        given = {(f"${k}" if f"${k}" in line else k): str(v) for k, v in values.items()}
        argv = substitute(line, {**self.values, **given})[1:]
        self.trace.append(" ".join(argv))
        result = self.runner.invoke(main, argv, catch_exceptions=False)
        stdout = result.stdout.strip()
        assert stdout.count("\n") == 0, f"`{line}` printed more than one line on stdout: {stdout[:300]}"
        payload = json.loads(stdout)
        if ok:
            assert result.exit_code == 0, f"`{' '.join(argv)}` failed ({result.exit_code}): {stdout[:500]}"
        else:
            assert result.exit_code != 0, f"`{' '.join(argv)}` was expected to fail"
        return payload

    def write_proposal(self, staging: str | Path, description: str, axes: list[str], parent: int, body: str) -> None:
        front = {"description": description, "axes": axes, "parent": parent}
        Path(staging, "proposal.md").write_text("---\n" + json.dumps(front) + "\n---\n" + body + "\n")


def git_log(run_dir: Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(run_dir), "log", "--format=%s"], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()

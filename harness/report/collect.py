"""Everything the report shows, read from a run directory through the run's own readers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.fileio import read_json
from harness.rundir import ledger
from harness.rundir.layout import RunPaths
from harness.evaluation.compare import compare_evaluations
from harness.rundir.certify import read as read_certification
from harness.rundir.records import read_iteration_metrics, read_manifest
from harness.rundir.state import read as read_state


@dataclass
class Iteration:
    row: dict                 # the ledger row
    patch: dict | None        # iterations/<N>/patch.json: the structured patch against the parent
    diff: str                 # iterations/<N>/diff.txt: the text diff against the parent
    reruns: dict | None       # iterations/<N>/reruns.json, when `architect rerun` drew more scores
    versus_parent: dict | None = None  # compare_evaluations(parent, this): gained / lost episodes, paired tests

    @property
    def number(self) -> int:
        return self.row["iteration"]

    @property
    def parent(self) -> int | None:
        return self.row.get("parent")

    @property
    def mean(self) -> float | None:
        return (self.row.get("primary") or {}).get("mean")


@dataclass
class RunData:
    run_id: str
    root: Path
    manifest: dict
    state: dict
    rows: list[dict]
    iterations: list[Iteration] = field(default_factory=list)
    certification: dict | None = None  # certification.json (harness.rundir.certify), once certified

    @property
    def best(self) -> dict | None:
        return ledger.best_row(self.rows)

    @property
    def label(self) -> str:
        return f"{self.manifest['variant']} · {self.run_id}"

    def best_so_far(self) -> list[tuple[int, float]]:
        """(iteration, best primary mean among committed iterations up to it)."""
        out, best = [], None
        for it in self.iterations:
            if it.mean is not None and (best is None or it.mean > best):
                best = it.mean
            if best is not None:
                out.append((it.number, best))
        return out


def collect_run(paths: RunPaths) -> RunData:
    data = RunData(paths.run_id, paths.root, read_manifest(paths), read_state(paths),
                   ledger.read_rows(paths.ledger))
    metrics = {}
    for row in ledger.committed(data.rows):
        folder = paths.iteration(row["iteration"])
        metrics[row["iteration"]] = read_iteration_metrics(paths, row["iteration"])
        parent = metrics.get(row.get("parent")) if row.get("parent") is not None else None
        mine = metrics[row["iteration"]]
        data.iterations.append(Iteration(row, _json_or_none(folder / "patch.json"), _text(folder / "diff.txt"),
                                         _json_or_none(folder / "reruns.json"),
                                         compare_evaluations(parent, mine) if parent and mine else None))
    data.certification = read_certification(paths)
    return data


def _json_or_none(path: Path):
    try:
        return read_json(path)
    except (OSError, ValueError):
        return None


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""

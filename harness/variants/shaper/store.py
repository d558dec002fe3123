"""The SHAPER files in a run's memory folder, each read and written through its schema:
`memory/shaper/beam.json` (shaper_beam), `gradients/r<round>-<candidate>.json`
(shaper_gradient), `rollouts/<candidate>.json` or `rollouts/r<round>-<candidate>.json`
(shaper_rollout), `final.json`
(shaper_final), `final.md` (the ablation table) and `history/r<round>.txt` (what the optimizer
is told of earlier rounds, one event per line)."""

from __future__ import annotations

from pathlib import Path

from harness.errors import UserError
from harness.rundir.records import read_record, write_record


class ShaperFiles:
    def __init__(self, memory: Path):
        self.root = Path(memory) / "shaper"

    @property
    def beam(self) -> Path:
        return self.root / "beam.json"

    def gradient(self, round_number: int, cid: str) -> Path:
        return self.root / "gradients" / f"r{round_number}-{cid}.json"

    def rollouts(self, cid: str, round_number: int | None = None) -> Path:
        name = cid if round_number is None else f"r{round_number}-{cid}"
        return self.root / "rollouts" / f"{name}.json"

    def history(self, round_number: int) -> Path:
        return self.root / "history" / f"r{round_number}.txt"

    @property
    def final(self) -> Path:
        return self.root / "final.json"

    @property
    def final_table(self) -> Path:
        return self.root / "final.md"

    def exists(self) -> bool:
        return self.beam.is_file()

    def read_beam(self) -> dict:
        if not self.beam.is_file():
            raise UserError(f"{self.beam}: missing: this run was not created by SHAPER "
                            "(start one with `architect loop shaper <seed>`)")
        return read_record("shaper_beam", self.beam)

    def write_beam(self, state: dict) -> None:
        write_record("shaper_beam", self.beam, state)

    def read(self, schema: str, path: Path) -> dict | None:
        return read_record(schema, path) if path.is_file() else None

    def write(self, schema: str, path: Path, record: dict) -> None:
        write_record(schema, path, record)

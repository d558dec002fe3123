"""Helpers for the mapgpt tests: the 4-scan fixture, the cassette paths and the full-data check."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import PROJECT_ROOT

FIXTURE = PROJECT_ROOT / "tests" / "fixtures" / "mp3d"
SEEDS = PROJECT_ROOT / "seeds"
CASSETTE = PROJECT_ROOT / "tests" / "cassettes" / "mapgpt_smoke.jsonl"
EXPECTED = PROJECT_ROOT / "tests" / "cassettes" / "mapgpt_smoke.expected.json"
CASSETTE_NOTE = ("scripted deterministic MapGPT planner (executors/mapgpt/stand_ins.py) on a loopback server; "
                 "no real LLM")


def full_data_dir() -> Path | None:
    """The user's imported R2R copy when it is complete, else None."""
    from executors.mp3d import data_r2r as data

    root = data.r2r_dir()
    return root if data.complete(root) else None


needs_full_data = pytest.mark.skipif(
    full_data_dir() is None,
    reason="needs the full R2R data in the data folder: run `architect data fetch r2r` "
           "(CI imports ../shared/data/r2r with `architect data fetch r2r --from ../shared/data/r2r`)")

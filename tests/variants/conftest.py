"""Fixtures of the variant tests; the helpers live in variantkit.py."""

import sys
from pathlib import Path

import pytest

# variantkit.py sits here; skillpack.py (the skill reader) in tests/skills.
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "skills"))

from variantkit import FakeRun, SkillDriver  # noqa: E402


@pytest.fixture
def fake_run(tmp_path):
    return FakeRun(tmp_path / "run")


@pytest.fixture
def driver(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARCHITECT_RUNS_DIR", raising=False)
    monkeypatch.setenv("ARCHITECT_TIER_EPISODES", "2")  # tiny smoke and performance tiers; the session cache is shared
    return SkillDriver(tmp_path)



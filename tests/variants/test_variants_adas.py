import json

import pytest

from harness.cli.output import UserError
from harness.variants import adas
from harness.variants.fitness import bootstrap_ci


def test_archive_holds_every_committed_iteration_with_its_fitness(fake_run):
    fake_run.commit([1, 0, 0, 0])
    fake_run.commit([0, 0, 0, 0], parent=0, description="zero scorer", axes=("planning",))
    fake_run.commit([1, 1, 1, 0], parent=0, description="better", axes=("memory/state",))
    result = adas.write_archive(fake_run.paths)
    entries = json.loads((fake_run.root / "memory" / "archive.json").read_text())
    assert [e["generation"] for e in entries] == [0, 1, 2] and result["entries"] == 3
    assert entries[1]["fitness"] == "95% Bootstrap Confidence Interval: (0.0%, 0.0%), Median: 0.0%"
    assert entries[2]["fitness"] == bootstrap_ci([1, 1, 1, 0]).text()
    assert entries[2]["graph"] == {"name": "g2", "nodes": {}} and entries[2]["axes"] == ["memory/state"]
    text = (fake_run.root / "memory" / "archive.md").read_text()
    assert "## Generation 1: zero scorer" in text and "rationale of 2" in text
    fake_run.commit([1, 1, 0, 0], parent=2, description="later")
    assert adas.write_archive(fake_run.paths)["entries"] == 4  # nothing removed, new one added


def test_debug_attempts_are_bounded_to_three(fake_run):
    staging = fake_run.staging("1")
    results = [adas.record_debug(staging, f"KeyError {i}") for i in range(3)]
    assert [r["retry"] for r in results] == [True, True, False]
    assert results[-1]["give_up"] and results[-1]["attempt"] == 3
    with pytest.raises(UserError, match="empty"):
        adas.record_debug(staging, "  ")


def test_history_shares_proposal_rounds_and_errors(fake_run):
    staging = fake_run.staging("1", description="a memory-augmented planner")
    first = adas.render_history(fake_run.paths, staging)
    assert first["next_round"] == 1 and first["reflexion_rounds"] == []
    (staging / "reflexion-1.md").write_text("## Critique\ntoo similar to generation 0\n")
    adas.record_debug(staging, "unconnected_input: planner.goal")
    second = adas.render_history(fake_run.paths, staging)
    text = (staging / "history.md").read_text()
    assert second["next_round"] == 2 and second["debug_attempts"] == 1
    assert "a memory-augmented planner" in text and "too similar to generation 0" in text
    assert "unconnected_input: planner.goal" in text and "archive.md" in text

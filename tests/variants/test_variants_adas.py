import json

import pytest

from harness.errors import UserError
from harness.variants.adas import archive as adas
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
    assert entries[0]["graph"] == {"name": "g0", "nodes": {}} and entries[0]["graph_diff"] is None
    assert entries[2]["graph"] is None and entries[2]["axes"] == ["memory/state"]
    assert entries[2]["graph_diff"] == [{"op": "json_patch", "patch": [{"op": "replace", "path": "/name", "value": "g2"}]}]
    text = (fake_run.root / "memory" / "archive.md").read_text()
    assert "## Generation 1: zero scorer" in text and "rationale of 2" in text
    assert "### Graph diff against generation 0" in text
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


def test_history_nests_the_proposals_own_headings_below_its_sections(fake_run):
    staging = fake_run.staging("1")
    proposal = (staging / "proposal.md").read_text()
    (staging / "proposal.md").write_text(proposal + "\n## Rationale\nwhy\n\n### Detail\n```\n## not a heading\n```\n")
    (staging / "reflexion-1.md").write_text("# Critique\nsame idea\n")
    adas.render_history(fake_run.paths, staging)
    lines = (staging / "history.md").read_text().splitlines()
    assert [line for line in lines if line.startswith("## ")] == ["## Current proposal", "## not a heading",
                                                                  "## Reflexion round 1"]
    assert "### Rationale" in lines and "#### Detail" in lines and "### Critique" in lines


def test_history_nests_a_revised_proposals_headings_below_its_revised_proposal_heading(fake_run):
    staging = fake_run.staging("1")
    (staging / "reflexion-1.md").write_text("## Critique\nsame idea\n\n## Revised proposal\n---\ndescription: d\n"
                                            "---\n\n## Rationale\nwhy\n")
    adas.render_history(fake_run.paths, staging)
    lines = (staging / "history.md").read_text().splitlines()
    assert lines[lines.index("## Reflexion round 1"):] == [
        "## Reflexion round 1", "### Critique", "same idea", "### Revised proposal", "---", "description: d", "---",
        "", "#### Rationale", "why"]


def test_archive_shows_the_code_an_entry_added_not_its_unchanged_files(fake_run):
    fake_run.commit([1, 0])
    it = fake_run.commit([1, 1], parent=0, description="own node type")
    nodeset = fake_run.paths.iteration(it) / "candidate" / "nodeset"
    nodeset.mkdir()
    (nodeset / "planner.py").write_text("class Planner:\n    pass\n")
    fake_run.commit([1, 1], parent=it, description="same code, new config")
    (fake_run.paths.iteration(2) / "candidate" / "nodeset").mkdir()
    (fake_run.paths.iteration(2) / "candidate" / "nodeset" / "planner.py").write_text("class Planner:\n    pass\n")
    entries = adas.archive_entries(fake_run.paths)
    assert entries[1]["files"] == {"nodeset/planner.py": "class Planner:\n    pass\n"}
    assert entries[2]["files"] == {}  # unchanged against its parent
    text = adas.render_archive(entries)
    assert "### nodeset/planner.py" in text and text.count("class Planner") == 1


REFLEXION = """## Critique
close to generation 0

## Revised proposal
```
---
description: a revised idea
axes: [planning]
parent: 0
---
Rationale: better.
```
"""


def test_revise_applies_the_revised_proposal_and_keeps_the_old_one(fake_run):
    fake_run.commit([1, 0])
    staging = fake_run.staging("1", description="first idea")
    (staging / "reflexion-1.md").write_text(REFLEXION)
    result = adas.apply_revision(staging, 1)
    assert result["description"] == "a revised idea"
    assert (staging / "proposal.md").read_text().startswith("---\ndescription: a revised idea")
    assert "first idea" in (staging / "proposal-before-1.md").read_text()
    (staging / "reflexion-2.md").write_text(REFLEXION.replace("parent: 0", "parent: 5"))
    with pytest.raises(UserError, match="staged parent is 0"):
        adas.apply_revision(staging, 2)
    (staging / "reflexion-2.md").write_text("## Critique\nno revision\n")
    with pytest.raises(UserError, match="no '## Revised proposal' section"):
        adas.apply_revision(staging, 2)
    assert "a revised idea" in (staging / "proposal.md").read_text()  # unchanged by the failures


def test_revise_lifts_the_revised_proposals_headings_and_the_archive_nests_them(fake_run):
    """A revision quoted under `## Revised proposal` may carry its headings a level down; the
    proposal gets the stage template's level back, and the archive puts them below `### Idea`."""
    fake_run.commit([1, 0])
    staging = fake_run.staging("1", description="first idea")
    revision = REFLEXION.replace("Rationale: better.", "### Rationale\nbetter\n\n#### Risk\n```\n# a comment\n```")
    (staging / "reflexion-1.md").write_text(revision)
    adas.apply_revision(staging, 1)
    lines = (staging / "proposal.md").read_text().splitlines()
    assert "## Rationale" in lines and "### Risk" in lines and "# a comment" in lines
    assert lines[:5] == ["---", "description: a revised idea", "axes: [planning]", "parent: 0", "---"]
    it = fake_run.commit([1, 1], parent=0, description="nested")
    proposal = fake_run.paths.iteration(it) / "proposal.md"
    proposal.write_text(proposal.read_text().replace(f"rationale of {it}", "## Rationale\nwhy\n\n### Detail\nmore"))
    text = adas.render_archive(adas.archive_entries(fake_run.paths)).splitlines()
    at = text.index("## Generation 1: nested")
    idea = text.index("### Idea", at)
    assert text[idea + 1] == "#### Rationale" and "##### Detail" in text[idea:]

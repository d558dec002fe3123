"""What the second blind tester (issue 26, LIBERO aflow run) found missing in the skills."""

from __future__ import annotations

from skillpack import ARCHITECT, command_lines, split


def _text(name: str) -> str:
    return " ".join(split(ARCHITECT / name)[1].split())


def test_loop_names_the_certification_dry_run():
    lines = command_lines(split(ARCHITECT / "loop.md")[1])
    assert any(line.startswith("architect certify ") and "--dry-run" in line for line in lines)


def test_loop_names_where_status_reports_a_near_tie():
    assert "`state.best.near_tie`" in _text("loop.md") and "`state.best.runner_up`" in _text("loop.md")


def test_aflow_says_exactly_what_counts_as_a_duplicate():
    text = _text("variants/aflow.md")
    assert "A duplicate is the same candidate" in text and "the same change on the same parent" in text
    assert "The same change on a different parent is a combination, not a duplicate" in text
    assert "`same_change_as`" in text
    step6 = text[text.index("6. `architect aflow duplicate"):text.index("7. Implement")]
    assert "`compared` lists what it compared: here only `description`" in step6 and "`not_compared`" in step6


def test_implementer_says_what_to_do_for_an_edit_without_a_graph_change():
    text = _text("implementer.md")
    step2 = text[text.index("2. Graph edits"):text.index("3. A new node type")]
    assert "`programs/*.json`" in step2 and "skips this step" in step2 and "edit those files directly" in step2


def test_understand_names_the_episode_filters():
    text = _text("understand.md")
    step5 = text[text.index("5. The baseline's behaviour"):text.index("6. Write")]
    assert "`--ticks A:B`" in step5 and "`--node NAME`" in step5 and "`ticks_total`" in step5
    assert any("--ticks" in line and "--node" in line for line in command_lines(split(ARCHITECT / "understand.md")[1]))

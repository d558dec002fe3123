"""Progress lines where stderr is not a terminal: each tenth of the episodes,
and at least every HEARTBEAT_SECONDS while slow episodes run (a line saying
how many are done even when none finished)."""

from __future__ import annotations

import time

from harness.evaluation import progress


def _lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_a_slow_evaluation_prints_a_line_every_heartbeat(capsys):
    with progress.progress_bar("certify: rerun 1/3 of iteration 0 · protocol", 100, True) as bar:
        bar.advance(True)  # 1 of 100: not a tenth, and the last line is recent
        assert _lines(capsys) == []
        bar.last_line -= progress.HEARTBEAT_SECONDS
        bar.heartbeat()
        beat = _lines(capsys)
        bar.heartbeat()  # just printed: nothing new
        assert _lines(capsys) == []
        bar.last_line -= progress.HEARTBEAT_SECONDS
        bar.advance(False)  # a finished episode after a long gap prints too
        late = _lines(capsys)
    assert beat == [beat[0]] and beat[0].startswith("certify: rerun 1/3 of iteration 0 · protocol: 1/100 episodes")
    assert "running" in beat[0]
    assert len(late) == 1 and "2/100 episodes" in late[0] and "running" not in late[0]


def test_the_heartbeat_runs_by_itself(capsys, monkeypatch):
    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.06)
    with progress.progress_bar("slow", 5, True):
        deadline = time.monotonic() + 5
        while "running" not in capsys.readouterr().err:
            assert time.monotonic() < deadline, "no heartbeat line"
            time.sleep(0.02)

"""A stopped run's tree stays clean: `aflow experience` after `end` commits its
files, and `status` names anything left uncommitted after the stop."""

from __future__ import annotations

from pathlib import Path

from rundir_kit import cli, git


def test_aflow_experience_after_end_commits_its_files(run_dir: Path):
    assert cli("end", str(run_dir), "--reason", "operator: evaluation too slow")["stopped"]
    result = cli("aflow", "experience", str(run_dir), "--parent", "0")
    assert result["committed"] and git(run_dir, "status", "--porcelain").strip() == ""
    assert "memory/experience.json" in git(run_dir, "show", "--name-only", "--format=", "HEAD")
    assert cli("status", str(run_dir))["problems"] == []
    again = cli("aflow", "experience", str(run_dir), "--parent", "0")  # nothing new: no empty commit
    assert again["committed"] is None


def test_status_reports_files_left_uncommitted_after_the_stop(run_dir: Path):
    cli("end", str(run_dir), "--reason", "operator: done")
    (run_dir / "memory" / "notes.md").write_text("left behind\n")
    status = cli("status", str(run_dir), ok=False)
    assert status["_exit_code"] == 4 and not status["consistent"]
    assert "uncommitted after the run stopped: memory/notes.md" in status["problems"][0]
    cli("end", str(run_dir), "--reason", "operator: done")  # the repair the problem names
    assert cli("status", str(run_dir))["consistent"] is True


def test_a_running_run_may_hold_memory_for_its_next_iteration(run_dir: Path):
    (run_dir / "memory" / "notes.md").write_text("for the next proposal\n")
    assert cli("status", str(run_dir))["consistent"] is True


def test_status_of_a_run_ended_at_its_cap_says_it_stopped_and_asks_for_nothing_more(run_dir: Path):
    goal = run_dir / "goal.md"
    goal.write_text(goal.read_text().replace("max_iterations: 40", "max_iterations: 0", 1))
    assert "end the loop with `architect end" in cli("status", str(run_dir))["summary"]
    assert cli("end", str(run_dir))["stopped"]
    after = cli("status", str(run_dir))
    assert after["state"]["status"] == "stopped" and after["stop"]["code"] == "max_iterations"
    assert "architect end" not in after["summary"]
    assert "status: stopped (last stop: max_iterations: 0 of 0 committed" in after["summary"]

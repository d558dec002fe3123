"""Damaged run directories: recovery handles any journal state and says what it
did; an emptied or garbled ledger is restored from git; a run whose own git
repository is gone or damaged is reported inconsistent (non-zero exit) and
every command that would change it refuses, naming how to repair it."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from rundir_kit import cli, git, iteration_commits

JOURNALS = {
    "half_written": b'{"op": "commit", "iteration": 1, "staging": "staging/1", "ledger_be',
    "missing_keys": b'{"op": "commit", "iteration": 1}',
    "discard_without_row": b'{"op": "discard", "staging": "staging/1"}',
    "wrong_types": b'{"op": "commit", "iteration": "one", "staging": 5, "ledger_before": [], "state_before": null}',
    "path_escape": json.dumps({"op": "discard", "staging": "staging/../../../victim",
                               "row": {"attempt": 1}}).encode(),
    "unknown_op": b'{"op": "rewrite-history"}',
    "garbage": b"\x00\xff\xfe garbage \x89PNG",
    "empty": b"",
    "list": b"[1, 2]",
    "nan": b'{"op": "commit", "iteration": NaN}',
}


def _status(run_dir: Path) -> dict:
    return cli("status", str(run_dir), ok=False)


@pytest.mark.parametrize("case", sorted(JOURNALS))
def test_any_journal_state_is_recovered_and_reported(case, run_dir, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("must survive")
    (run_dir / ".journal.json").write_bytes(JOURNALS[case])
    status = _status(run_dir)
    assert status["_exit_code"] == 0 and status["consistent"], status
    assert any("journal" in action for action in status["recovered"]), status["recovered"]
    assert not (run_dir / ".journal.json").exists()
    assert (victim / "keep.txt").read_text() == "must survive"
    staged = cli("stage", str(run_dir))
    assert Path(staged["staging"]).is_dir()


def test_an_uncommitted_iteration_under_a_broken_journal_goes_back_to_staging(run_dir):
    staged = Path(cli("stage", str(run_dir))["staging"])
    (staged / "candidate" / "marker.txt").write_text("work in progress")
    (run_dir / "iterations").mkdir(exist_ok=True)
    staged.rename(run_dir / "iterations" / "1")  # a commit killed after its rename, journal half-written
    (run_dir / ".journal.json").write_bytes(JOURNALS["half_written"])
    status = _status(run_dir)
    assert status["consistent"] and status["_exit_code"] == 0, status
    assert not (run_dir / "iterations" / "1").exists()
    assert (run_dir / "staging" / "1" / "candidate" / "marker.txt").read_text() == "work in progress"
    assert any("moved back to staging/1" in action for action in status["recovered"]), status["recovered"]


@pytest.mark.parametrize("content", [b"", b"\n\n", b"\x00\x01 binary", b'{"attempt": 1}\n', b"[]\n"],
                         ids=["empty", "blank_lines", "binary", "invalid_row", "not_an_object"])
def test_a_damaged_ledger_is_restored_from_git(content, run_dir):
    committed = (run_dir / "ledger.jsonl").read_text()
    (run_dir / "ledger.jsonl").write_bytes(content)
    status = _status(run_dir)
    assert status["_exit_code"] == 0 and status["consistent"], status
    assert any("ledger.jsonl" in action for action in status["recovered"]), status["recovered"]
    assert (run_dir / "ledger.jsonl").read_text() == committed
    staged = cli("stage", str(run_dir))
    assert staged["ok"] and staged["parent"] == 0


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.relative_to(root).parts}


def _break_git(run_dir: Path, how: str) -> None:
    if how == "deleted_git":
        subprocess.run(["rm", "-rf", str(run_dir / ".git")], check=True)
    elif how == "garbage_head":
        (run_dir / ".git" / "HEAD").write_bytes(b"\x00garbage\xff")
    elif how == "head_to_missing_commit":
        (run_dir / ".git" / "HEAD").write_text("0123456789abcdef0123456789abcdef01234567\n")
    elif how == "empty_head":
        (run_dir / ".git" / "HEAD").write_text("")


@pytest.mark.parametrize("how", ["deleted_git", "garbage_head", "head_to_missing_commit", "empty_head"])
def test_a_run_without_a_usable_repository_refuses_every_change(how, run_dir, tmp_path):
    outer = run_dir.parent.parent  # the run sits inside another repository: git must not fall back to it
    git_init = subprocess.run(["git", "init", "-q", str(outer)], capture_output=True, text=True)
    assert git_init.returncode == 0
    staged = Path(cli("stage", str(run_dir))["staging"])
    _break_git(run_dir, how)
    before = _snapshot(run_dir)
    status = _status(run_dir)
    assert status["_exit_code"] != 0 and status["consistent"] is False
    assert status["problems"] and "restore" in status["repair"]
    for args in (["stage", str(run_dir)], ["check", str(run_dir), str(staged)],
                 ["discard", str(run_dir), str(staged), "--reason", "x"],
                 ["commit", str(run_dir), str(staged), "--description", "x"],
                 ["loop", "random", "babyai", "--run-id", run_dir.name, "--runs-dir", str(run_dir.parent),
                  "--resume", "--iterations", "1"]):
        out = cli(*args, ok=False)
        assert out["_exit_code"] != 0, (args, out)
        assert "not consistent" in out["error"] and ".git" in out["error"], out["error"]
    assert _snapshot(run_dir) == before
    outer_log = subprocess.run(["git", "-C", str(outer), "log", "--oneline"], capture_output=True, text=True)
    assert outer_log.stdout == ""  # nothing was committed to the enclosing repository


def test_status_of_a_consistent_run_still_exits_zero(run_dir):
    status = _status(run_dir)
    assert status["_exit_code"] == 0 and status["consistent"] and iteration_commits(run_dir) == [0]
    assert git(run_dir, "status", "--porcelain").strip() == ""

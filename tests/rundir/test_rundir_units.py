"""Pure pieces of the run directory: whitelist globs, ledger-derived state,
proposal front matter, the run lock."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from harness.errors import UserError
from harness.rundir import ledger, proposal, state, whitelist
from harness.rundir.lock import run_lock


@pytest.mark.parametrize("path, patterns, expected", [
    ("graph.json", ["graph.json"], True),
    ("prompts/plan.md", ["prompts/*.md"], True),
    ("prompts/deep/plan.md", ["prompts/*.md"], False),
    ("prompts/deep/plan.md", ["prompts/**"], True),
    ("nodeset/a.py", ["nodeset/**/*.py"], True),
    ("nodeset/sub/a.py", ["nodeset/**/*.py"], True),
    ("vendor/x.py", ["graph.json", "nodeset/**"], False),
    ("graphXjson", ["graph.json"], False),
])
def test_whitelist_globs(path, patterns, expected):
    assert whitelist.allowed(path, patterns) is expected


def test_whitelist_reports_every_kind_of_change_outside_the_patterns():
    parent = {"graph.json": b"{}", "profile.yaml": b"a", "gone.txt": b"x"}
    child = {"graph.json": b"{\"a\":1}", "profile.yaml": b"b", "extra.py": b""}
    found = {(v["path"], v["code"]) for v in whitelist.violations(parent, child, ["graph.json"])}
    assert found == {("profile.yaml", "whitelist"), ("gone.txt", "whitelist"), ("extra.py", "whitelist")}
    kinds = dict((p, k) for k, p in whitelist.changes(parent, child))
    assert kinds == {"graph.json": "changed", "profile.yaml": "changed", "gone.txt": "removed", "extra.py": "added"}


def _row(attempt, iteration, status, mean=None, axes=()):
    return {"attempt": attempt, "iteration": iteration, "parent": 0 if iteration else None, "status": status,
            "description": "d", "time": "2026-01-01T00:00:00+00:00", "axes": list(axes),
            "primary": None if mean is None else {"mean": mean}}


def test_state_is_derived_from_the_ledger():
    rows = [_row(0, 0, "committed", 0.2), _row(1, 1, "discarded"), _row(2, 1, "committed", 0.5, ["planning"]),
            _row(3, 2, "committed", 0.4, ["planning", "memory/state"]), _row(4, 3, "discarded"), _row(5, 3, "discarded")]
    derived = state.derive(rows)
    assert derived["next_iteration"] == 3
    assert derived["consecutive_skips"] == 2
    assert derived["attempts"] == 6
    assert derived["best"] == {"iteration": 1, "score": 0.5, "vs_parent": None}
    assert ledger.axis_share(rows) == {"axis": "planning", "iterations": 2, "share": 1.0, "tied": ["planning"]}
    rows.append(_row(6, 3, "committed", 0.6, ["memory/state"]))  # two axes used as often: both named
    assert ledger.axis_share(rows) == {"axis": "planning", "iterations": 2, "share": round(2 / 3, 3),
                                       "tied": ["planning", "memory/state"]}


def test_best_ranks_the_paired_verdict_before_the_mean():
    def judged(attempt, iteration, mean, verdict):
        return dict(_row(attempt, iteration, "committed", mean), vs_parent={"verdict": verdict})

    rows = [_row(0, 0, "committed", 0.2), judged(1, 1, 0.30, "better"), judged(2, 2, 0.45, "indistinguishable"),
            judged(3, 3, 0.60, "worse")]
    assert [r["iteration"] for r in ledger.ranked(rows)] == [1, 2, 0, 3]
    assert state.derive(rows)["best"] == {"iteration": 1, "score": 0.3, "vs_parent": "better"}
    rows.append(judged(4, 4, 0.35, "better"))   # among `better` ones the mean decides
    assert ledger.best_row(rows)["iteration"] == 4


def test_ledger_rejects_rows_violating_the_schema(tmp_path):
    path = tmp_path / "ledger.jsonl"
    ledger.append_row(path, _row(0, 0, "committed", 0.1))
    with pytest.raises(UserError, match="ledger_row"):
        ledger.append_row(path, dict(_row(1, 1, "committed"), status="maybe"))
    assert len(ledger.read_rows(path)) == 1
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(UserError, match=r"ledger.jsonl:2"):
        ledger.read_rows(path)


def test_proposal_front_matter_round_trip_and_problems(tmp_path):
    path = tmp_path / "proposal.md"
    proposal.write(path, {"description": "add a memory", "axes": ["memory/state"], "parent": 2}, "\nwhy\n")
    meta, body = proposal.read(path)
    assert meta == {"description": "add a memory", "axes": ["memory/state"], "parent": 2}
    assert body.strip() == "why"
    assert proposal.problems(path) == []
    proposal.write(path, {"description": "x", "axes": ["vibes"], "parent": 2}, "")
    problems = proposal.problems(path)
    assert problems and problems[0]["path"] == "proposal.md" and "axes" in problems[0]["message"]
    path.write_text("no front matter")
    assert "no YAML front matter" in proposal.problems(path)[0]["message"]
    path.write_text("---\ndescription: swap the explorer: frontiers\naxes: [exploration]\nparent: 0\n---\n")
    (yaml_problem,) = proposal.problems(path)  # an unquoted ": " in a value: the hint says how to write it
    assert "proposal.md:2:" in yaml_problem["message"] and "double quotes" in yaml_problem["hint"]
    path.write_text('---\ndescription: "swap the explorer: frontiers"\naxes: [exploration]\nparent: 0\n---\n')
    assert proposal.problems(path) == []
    path.write_text("---\ndescription: x\n")
    assert proposal.problems(path)[0]["hint"] is None  # never closed: not a quoting matter


def test_written_front_matter_double_quotes_what_the_proposer_is_told_to(tmp_path):
    path = tmp_path / "proposal.md"
    proposal.write(path, *proposal.template(4))
    assert f'description: "{proposal.PLACEHOLDER}"' in path.read_text()  # the form an agent copies
    tricky = 'swap the explorer: frontiers # then "stop" at 3\'s'
    proposal.write(path, {"description": tricky, "axes": ["exploration"], "parent": 1}, "")
    assert 'description: "swap the explorer' in path.read_text() and "axes:\n- exploration" in path.read_text()
    assert proposal.read(path)[0]["description"] == tricky and proposal.problems(path) == []


def test_second_process_gets_run_busy_with_the_holder_pid(tmp_path):
    lock = tmp_path / ".lock"
    script = textwrap.dedent(f"""
        import sys
        from harness.rundir.lock import run_lock, RunBusy
        try:
            with run_lock(__import__('pathlib').Path({str(lock)!r}), timeout=0.1):
                pass
        except RunBusy as exc:
            print(exc.message); sys.exit(3)
    """)
    with run_lock(lock):
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 3
    assert f"run is busy (held by pid {os.getpid()})" in proc.stdout
    # released: a new holder gets it at once
    with run_lock(lock, timeout=0.1):
        pass

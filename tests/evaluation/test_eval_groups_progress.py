"""Episode groups in comparisons come from the executor (EQA: the question type; one group,
said so, when an executor declares none); progress lines name what is run and count the
primary metric by its name."""

from __future__ import annotations

from harness.evaluation.compare import compare_evaluations, render
from harness.evaluation.progress import progress_bar


def _eqa(eid: str, qtype: str, success: bool) -> dict:
    return {"episode_id": eid, "level": None, "success": success, "termination": "agent_done", "steps": 3,
            "metrics": {"type": qtype, "answered": True, "answer": "A", "truth": "A" if success else "B"}}


def test_eqa_comparisons_are_grouped_by_question_type():
    a = {"executor": "eqa", "episodes": [_eqa("q1", "count", False), _eqa("q2", "room", True),
                                         _eqa("q3", "count", True)]}
    b = {"executor": "eqa", "episodes": [_eqa("q1", "count", True), _eqa("q2", "room", True),
                                         _eqa("q3", "count", True)]}
    result = compare_evaluations(a, b, metrics=[])
    assert set(result["groups"]) == {"count", "room"}
    assert result["groups"]["count"]["gained"] == 1 and result["groups"]["room"]["episodes"] == 1
    assert "one group" not in result["grouped_by"]


def test_an_executor_without_groups_is_said_to_have_one():
    records = [{"episode_id": f"{i}_0", "level": None, "success": i % 2 == 0, "termination": "agent_done",
                "steps": 3, "metrics": {}} for i in range(4)]
    result = compare_evaluations({"executor": "smartway", "episodes": records},
                                 {"executor": "smartway", "episodes": records}, metrics=[])
    assert list(result["groups"]) == ["all"]
    assert result["grouped_by"].startswith("one group: executor smartway declares no level or group key")
    assert "one group: executor smartway" in render(result, "iteration 0", "iteration 1")


def test_progress_lines_name_what_runs_and_count_the_primary_metric(capsys):
    with progress_bar("iteration 3 · holdout", 2, True, "accuracy") as bar:
        bar.advance(True)
        bar.advance(False)
    err = capsys.readouterr().err
    assert "iteration 3 · holdout: 2/2 episodes, accuracy 1/2 (50%)  infra 0" in err and "success" not in err


def test_the_counted_name_is_the_primary_metric_only_when_it_is_the_success_itself():
    from harness.evaluation.evaluator import _counted
    from harness.executor_api import load_executor

    assert _counted(load_executor("eqa")) == "accuracy"
    assert _counted(load_executor("babyai")) == "success_rate"

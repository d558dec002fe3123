"""The failure summary of one evaluation: failed episodes with their reasons and
first failing firing, termination reasons x level, the most frequent last agent
firing before a failure."""

from __future__ import annotations

from harness.canvas.episode_log import EpisodeLog
from harness.evaluation import failures as F


def _log(path, steps: int, last_node: str, error_at: int | None = None) -> str:
    log = EpisodeLog()
    log.episode, log.result = {"episode_id": path.stem}, {"success": False}
    log.firing("sim", "toy.Simulator", 0, None, {"observation": 0}, 0.0)
    for tick in range(steps):
        error = "Traceback (most recent call last):\n  ...\nValueError: no path" if tick == error_at else None
        log.firing("planner", "toy.Planner", tick, {"observation": tick}, {"action": "go"}, 0.0, error=error)
        log.firing(last_node, "toy.Act", tick, {"action": "go"}, {"actions": ["go"]}, 0.0)
        log.firing("sim", "toy.Simulator", tick, {"actions": ["go"]}, {"observation": tick + 1}, 0.0)
    log.write_jsonl(path)
    return f"episodes/{path.name}"


def _record(eid: str, level: str, success: bool, termination: str, log: str | None, **extra) -> dict:
    return {"episode_id": eid, "level": level, "success": success, "termination": termination, "steps": 3,
            "error": None, "infra_error": None, "metrics": {}, "log": log, **extra}


def test_failed_episodes_and_their_summary(tmp_path):
    (tmp_path / "episodes").mkdir()
    logs = {name: _log(tmp_path / "episodes" / f"{name}.jsonl", 3, node, error_at)
            for name, node, error_at in (("a", "act", None), ("b", "act", 1), ("c", "fallback", None))}
    metrics = {"episodes": [
        _record("L1:1", "L1", True, "success", None),
        _record("L1:2", "L1", False, "sim_done", logs["a"], metrics={"termination": "failure"}),
        _record("L1:3", "L1", False, "node_error", logs["b"], error="node 'planner' raised\nValueError: no path"),
        _record("L2:1", "L2", False, "max_steps", logs["c"]),
        _record("L2:2", "L2", False, "infra_error", None, infra_error="harness error\nTraceback\nOSError: disk full"),
    ]}
    failed = F.failed_episodes(metrics, tmp_path)
    assert [f["episode_id"] for f in failed] == ["L1:2", "L1:3", "L2:1", "L2:2"]
    a, b, c, infra = failed
    assert a["reason"] == "sim_done (failure)"
    assert a["first_failing_firing"] == {"tick": 2, "node": "sim", "type": "toy.Simulator",
                                         "why": "its step ended the episode"}
    assert b["first_failing_firing"] == {"tick": 1, "node": "planner", "type": "toy.Planner",
                                         "why": "raised: ValueError: no path"}
    assert c["first_failing_firing"] is None and c["last_agent_firing"]["node"] == "fallback"
    assert a["last_agent_firing"] == {"tick": 2, "node": "act", "type": "toy.Act", "why": "last agent firing"}
    assert infra["error"] == "OSError: disk full" and infra["last_agent_firing"] is None

    summary = F.summary(metrics, failed)
    assert summary["episodes"] == 5 and summary["failed"] == 4
    assert summary["by_level"]["L1"] == {"episodes": 3, "failed": 2,
                                         "reasons": {"sim_done (failure)": 1, "node_error": 1},
                                         "kinds": {"sim_done (failure)": 1, "node_error": 1}}
    assert summary["by_level"]["L2"]["reasons"] == {"max_steps": 1, "infra_error": 1}
    assert summary["last_agent_firing"] == {"node": "act", "type": "toy.Act", "failures": 2}
    finding = F.finding(summary)
    assert finding["kind"] == "failures" and finding["message"].startswith("4 of 5 episodes failed: L1 2/3")
    assert "act (toy.Act) in 2 of 4" in finding["message"]
    text = F.render(failed)
    assert text.splitlines()[0] == "L1:" and "first failing firing: tick 1 planner (toy.Planner)" in text


def test_no_failures():
    metrics = {"episodes": [_record("L1:1", "L1", True, "success", None)]}
    summary = F.summary(metrics, F.failed_episodes(metrics, None))
    assert summary["failed"] == 0 and summary["last_agent_firing"] is None and summary["by_level"] == {}
    assert F.render([]) == "no failed episodes"


def _nav(eid: str, success: bool, *, stopped: bool, oracle: float, nav_error: float, length: float,
         termination: str = "sim_done", **extra) -> dict:
    return _record(eid, None, success, termination, None, **extra, metrics={
        "stopped": stopped, "ended": "stopped" if stopped else "not_stopped", "oracle_success": oracle,
        "oracle_error": 1.5 if oracle else 6.0, "nav_error": nav_error, "trajectory_length": length,
        "reference_length": 10.0})


def test_navigation_failures_tell_stopping_early_from_overshooting():
    metrics = {"executor": "smartway", "episodes": [
        _nav("ok", True, stopped=True, oracle=1.0, nav_error=1.0, length=10.0),
        _nav("early", False, stopped=True, oracle=0.0, nav_error=8.0, length=2.0),
        _nav("astray", False, stopped=True, oracle=0.0, nav_error=6.4, length=9.5),  # 0.5 m left, 6.4 m away
        _nav("past", False, stopped=True, oracle=0.0, nav_error=7.0, length=14.0),
        _nav("never", False, stopped=False, oracle=0.0, nav_error=5.0, length=12.0, termination="max_steps"),
        _nav("passed", False, stopped=True, oracle=1.0, nav_error=4.0, length=11.0),
        _nav("broke", False, stopped=False, oracle=0.0, nav_error=5.0, length=1.0, termination="node_error",
             error="node 'choose' raised\nKeyError: 'x'"),
    ]}
    failed = {f["episode_id"]: f for f in F.failed_episodes(metrics, None)}
    assert {k: f["kind"] for k, f in failed.items()} == {
        "early": "stopped_early", "astray": "stopped_off_route", "past": "stopped_past_goal", "never": "never_stopped",
        "passed": "passed_goal_stopped_elsewhere", "broke": "node_error"}
    assert "2.0 m of the reference path's 10.0 m" in failed["early"]["detail"]
    assert "came within 1.5 m of the goal, stopped 4.0 m" in failed["passed"]["detail"]
    summary = F.summary(metrics, list(failed.values()))
    assert "farther than the 0.5 m left of the reference length" in failed["astray"]["detail"]
    assert summary["kinds"]["stopped_early"] == 1 and summary["by_level"]["all"]["episodes"] == 7
    assert "stopped_early 1" in F.finding(summary)["message"]
    assert "early: stopped_early (travelled 2.0 m" in F.render(list(failed.values()))
    mapgpt = dict(metrics, executor="mapgpt")
    assert [f["kind"] for f in F.failed_episodes(mapgpt, None)] == [failed[k]["kind"] for k in failed]


def _eqa(eid: str, qtype: str, success: bool, answer: str | None) -> dict:
    return _record(eid, None, success, "max_steps", None, metrics={
        "type": qtype, "answered": answer is not None, "answer": answer, "truth": "B", "invalid_answers": 0})


def test_eqa_failures_are_wrong_or_missing_answers_by_question_type():
    metrics = {"executor": "eqa", "episodes": [
        _eqa("q1", "count", True, "B"), _eqa("q2", "count", False, "C"), _eqa("q3", "room", False, None),
        _eqa("q4", "room", True, "B")]}
    failed = F.failed_episodes(metrics, None)
    assert [(f["episode_id"], f["level"], f["kind"]) for f in failed] == [
        ("q2", "count", "wrong_answer"), ("q3", "room", "unanswered")]
    assert failed[0]["detail"] == "answered C, truth B"
    summary = F.summary(metrics, failed)
    assert summary["by_level"]["count"]["episodes"] == 2 and summary["kinds"] == {"wrong_answer": 1, "unanswered": 1}
    assert "max_steps" not in F.finding(summary)["message"]

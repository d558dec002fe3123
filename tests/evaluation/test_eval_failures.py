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
                                         "reasons": {"sim_done (failure)": 1, "node_error": 1}}
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

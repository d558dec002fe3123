"""The Ray backend on a real local Ray instance (2 CPUs, started once for the
module): episode-by-episode agreement with the local pool, and the local
pool's retry semantics (dead actor replaced and its episode retried once,
twice is an infrastructure failure, a hung episode's actor killed)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from harness.evaluation import evaluate
from harness.evaluation.pool import PoolConfig
from harness.evaluation.ray_pool import RayOptions, run_ray_pool

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e \".[test]\" brings it)")

SEED = Path(__file__).resolve().parents[2] / "seeds" / "babyai"
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    path = os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH")) if p)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield
    ray.shutdown()


def _comparable(metrics):
    return [{k: v for k, v in r.items() if k != "wall_seconds"} for r in metrics["episodes"]]


def test_ray_matches_local_pool_episode_by_episode(tmp_path):
    local = evaluate(SEED, "search", episodes=4, workers=2, out_dir=tmp_path / "local", use_cache=False,
                     progress=False)
    on_ray = evaluate(SEED, "search", episodes=4, workers=2, out_dir=tmp_path / "ray", use_cache=False,
                      progress=False, backend="ray")
    assert (local["backend"], on_ray["backend"]) == ("local", "ray")
    assert on_ray["complete"] and on_ray["infra_failures"] == 0
    assert _comparable(on_ray) == _comparable(local)
    # each episode's log came back to the driver: the same firings as the local one
    for rec in on_ray["episodes"]:
        assert _firings(tmp_path / "ray" / rec["log"]) == _firings(tmp_path / "local" / rec["log"])


def _firings(log: Path) -> list:
    from harness.evaluation.trace import read_log

    return [(r["node"], r["tick"], r["outputs"]) for r in read_log(log)[1]]


def test_cli_backend_ray_prints_one_json_object(tmp_path):
    # right after the test above: the same candidate, so the same actors serve it without reloading
    from click.testing import CliRunner

    from harness.cli import main

    result = CliRunner().invoke(main, ["experiment", "run", str(SEED), "--tier", "smoke", "--episodes", "2",
                                       "--backend", "ray", "--out", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["backend"] == "ray" and body["n"] == 2 and body["smoke_gate"]["passed"]
    assert sorted(p.name for p in (tmp_path / "out" / "episodes").iterdir()) == [
        "BabyAI-GoToLocal-v0_1.jsonl", "BabyAI-GoToObjMazeS4-v0_3.jsonl"]  # 2 episodes: one of each of two levels

    refused = CliRunner().invoke(main, ["experiment", "run", str(SEED), "--tier", "smoke", "--ray-address", "auto"])
    assert refused.exit_code == 2 and refused.stderr.strip() == "error: --ray-address needs --backend ray"


def _kill_when_marked(marker: Path, killed: list) -> None:
    deadline = time.time() + 120
    while time.time() < deadline:
        if marker.exists() and marker.read_text().strip().isdigit():
            pid = int(marker.read_text())
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            return
        time.sleep(0.05)


def test_killed_actor_is_replaced_and_retry_semantics_match_the_local_pool(tmp_path):
    marker = tmp_path / "pid"
    episodes = [{"seed": 0, "await_kill_marker": str(marker)}, {"seed": 1}, {"seed": 2, "hang": True},
                {"seed": 3}, {"seed": 4}, {"seed": 5}]
    tasks = [{"index": i, "episode": {"episode_id": f"e{i}", **ep}, "log_path": None} for i, ep in enumerate(episodes)]
    killed: list = []
    killer = threading.Thread(target=_kill_when_marked, args=(marker, killed), daemon=True)
    killer.start()
    config = PoolConfig(workers=2, threads=1, in_flight=2, task_timeout=2.5)
    outcomes = run_ray_pool(tasks, "eval_fake_runners:ScriptedRunner", {}, config, RayOptions(num_cpus=0.5))
    killer.join(timeout=1)
    assert killed, "the episode never started on an actor"
    assert sorted(outcomes) == list(range(6))
    # killed mid-episode: actor replaced, episode retried once and completed
    assert outcomes[0].record is not None and outcomes[0].attempts == 2 and outcomes[0].infra_error is None
    assert outcomes[0].record["metrics"]["pid"] != killed[0]
    # hangs every time: the deadline kills the actor, twice is an infrastructure failure
    assert outcomes[2].record is None and outcomes[2].attempts == 2 and "hung" in outcomes[2].infra_error
    for i in (1, 3, 4, 5):
        assert outcomes[i].record is not None and outcomes[i].record["success"] == (i % 2 == 0)


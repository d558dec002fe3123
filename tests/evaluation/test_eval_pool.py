"""The supervisor alone, with scripted runners: dynamic dispatch, kill/replace
of dead and hung workers, retry once, infrastructure failures."""

from __future__ import annotations

import time

from harness.evaluation.pool import PoolConfig, run_pool

FACTORY = "eval_fake_runners:ScriptedRunner"


def _tasks(episodes):
    return [{"index": i, "episode": {"episode_id": f"e{i}", **ep}, "log_path": None} for i, ep in enumerate(episodes)]


def _config(**kw):
    base = dict(workers=2, threads=1, in_flight=2, task_timeout=30.0)
    base.update(kw)
    return PoolConfig(**base)


def test_every_task_runs_once_and_workers_are_reused():
    outcomes = run_pool(_tasks([{"seed": s} for s in range(8)]), FACTORY, {}, _config())
    assert sorted(outcomes) == list(range(8))
    assert all(o.infra_error is None and o.attempts == 1 for o in outcomes.values())
    assert [o.record["success"] for o in (outcomes[i] for i in range(8))] == [s % 2 == 0 for s in range(8)]
    pids = {o.record["metrics"]["pid"] for o in outcomes.values()}
    assert len(pids) <= 2
    # runners live across episodes: some runner ran more than one episode
    assert max(o.record["metrics"]["runner_episodes"] for o in outcomes.values()) >= 2


def test_dead_worker_is_replaced_and_episode_retried_then_infra_failure(tmp_path):
    episodes = [{"seed": 0}, {"seed": 1, "crash": True}, {"seed": 2},
                {"seed": 3, "crash_once_marker": str(tmp_path / "m")}, {"seed": 4}]
    outcomes = run_pool(_tasks(episodes), FACTORY, {}, _config())
    crashed = outcomes[1]
    assert crashed.record is None and crashed.attempts == 2
    assert "died" in crashed.infra_error and "exit code 7" in crashed.infra_error
    retried = outcomes[3]  # died once, succeeded on the retry
    assert retried.infra_error is None and retried.record["steps"] == 3 % 7 + 1 and retried.attempts == 2
    for i in (0, 2, 4):
        assert outcomes[i].infra_error is None and outcomes[i].record is not None


def test_hung_worker_is_killed_and_others_finish():
    episodes = [{"seed": 0}, {"seed": 1, "hang": True}, {"seed": 2}, {"seed": 4}]
    outcomes = run_pool(_tasks(episodes), FACTORY, {}, _config(task_timeout=1.0))
    assert outcomes[1].record is None and outcomes[1].attempts == 2
    assert "hung" in outcomes[1].infra_error
    assert all(outcomes[i].record is not None for i in (0, 2, 3))


def test_hang_only_charges_the_overdue_episode_among_threads():
    # two threads in one worker: one hangs, the other is merely slow
    episodes = [{"seed": 1, "hang": True}, {"seed": 2, "sleep": 0.5}, {"seed": 4}]
    outcomes = run_pool(_tasks(episodes), FACTORY, {}, _config(workers=1, threads=2, in_flight=2, task_timeout=1.2))
    assert outcomes[0].infra_error is not None
    assert outcomes[1].record is not None and outcomes[2].record is not None


def test_harness_exception_in_runner_is_retried_then_infra():
    outcomes = run_pool(_tasks([{"seed": 1, "raise": True}, {"seed": 2}]), FACTORY, {}, _config())
    assert outcomes[0].record is None and "harness-side failure" in outcomes[0].infra_error
    assert outcomes[1].record is not None


def test_setup_failure_is_an_agent_error_for_every_episode():
    outcomes = run_pool(_tasks([{"seed": s} for s in range(3)]), "eval_fake_runners:BrokenSetupRunner", {}, _config())
    for o in outcomes.values():
        assert o.infra_error is None
        assert o.record["termination"] == "node_error" and "setup exploded" in o.record["error"]


def test_threads_overlap_within_one_worker():
    # 6 sleeping episodes, 1 worker x 3 threads: they must run concurrently
    episodes = [{"seed": s, "sleep": 0.3} for s in range(6)]
    t0 = time.time()
    outcomes = run_pool(_tasks(episodes), FACTORY, {}, _config(workers=1, threads=3, in_flight=3))
    wall = time.time() - t0
    spans = sorted((o.record["metrics"]["start"], o.record["metrics"]["end"]) for o in outcomes.values())
    max_overlap = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    print(f"6 x 0.3 s episodes on 3 threads: wall {wall:.2f} s, max overlap {max_overlap}")
    assert max_overlap == 3
    assert len({o.record["metrics"]["pid"] for o in outcomes.values()}) == 1


def test_workers_that_never_start_end_the_run_with_infra_failures():
    t0 = time.time()
    outcomes = run_pool(_tasks([{"seed": 0}, {"seed": 1}]), "eval_fake_runners:HangingSetupRunner", {},
                        _config(workers=1, startup_timeout=1.0, max_startup_failures=2))
    assert all(o.record is None and "did not start" in o.infra_error for o in outcomes.values())
    assert time.time() - t0 < 30


def test_workers_fork_from_a_preloaded_forkserver_yet_see_the_current_environment(monkeypatch):
    """Workers start from the forkserver (which imported `preload` once), but the
    environment they run in is the parent's at their start, not the forkserver's."""
    from harness.evaluation.pool import worker_context

    config = _config(preload=("eval_fake_runners",))
    assert worker_context(config.preload).get_start_method() == "forkserver"
    first = run_pool(_tasks([{"seed": 0}]), FACTORY, {}, config)
    monkeypatch.setenv("ARCHITECT_TEST_PROBE", "set after the forkserver started")
    later = run_pool(_tasks([{"seed": 0}, {"seed": 2}]), FACTORY, {}, config)
    assert first[0].record["metrics"]["probe_env"] is None
    assert {o.record["metrics"]["probe_env"] for o in later.values()} == {"set after the forkserver started"}


def test_the_forkserver_preloads_modules_from_the_parents_sys_path(tmp_path):
    """A module the parent finds through its own sys.path is the one the
    forkserver preloads and the workers run, even when another module of that
    name sits in the current folder (where Python 3.11's forkserver would look first)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    runner = ("WHERE = {where!r}\n\nclass Runner:\n    def run(self, episode, log_path):\n"
              "        return {{'where': WHERE}}\n\n    def close(self):\n        pass\n")
    for where in ("intended", "shadow"):
        (tmp_path / where).mkdir()
        (tmp_path / where / "probe_preload.py").write_text(runner.format(where=where))
    script = tmp_path / "main.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(tmp_path / 'intended')!r})\n"
        "from harness.evaluation.pool import PoolConfig, run_pool\n"
        "if __name__ == '__main__':\n"
        "    out = run_pool([{'index': 0, 'episode': {'episode_id': 'e'}, 'log_path': None}], 'probe_preload:Runner',\n"
        "                   {}, PoolConfig(workers=1, threads=1, in_flight=1, task_timeout=60, preload=('probe_preload',)))\n"
        "    print(out[0].record['where'])\n")
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path / "shadow", env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "intended"


def test_a_driver_read_from_stdin_starts_its_workers():
    """`python - < driver.py`: the main script has no file a worker could re-run; the
    workers start anyway (before, every one died at start with FileNotFoundError)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    driver = ("from harness.evaluation.pool import PoolConfig, run_pool\n"
              "out = run_pool([{'index': 0, 'episode': {'episode_id': 'e', 'seed': 2}, 'log_path': None}],\n"
              "               'eval_fake_runners:ScriptedRunner', {}, PoolConfig(workers=1, threads=1, in_flight=1,\n"
              "               task_timeout=60, max_startup_failures=1))\n"
              "print(out[0].infra_error or out[0].record['success'])\n")
    here = Path(__file__).resolve().parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(here), str(here.parents[1])]))
    done = subprocess.run([sys.executable, "-"], input=driver, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "True", done.stdout + done.stderr


def test_an_incomplete_evaluation_names_the_cause_of_its_first_infrastructure_failure():
    from harness.evaluation.failures import infra_cause

    outcomes = run_pool(_tasks([{"seed": 1}, {"seed": 3, "raise": True}]), FACTORY, {}, _config())
    metrics = {"episodes": [{"episode_id": f"e{i}", "infra_error": outcomes[i].infra_error} for i in (0, 1)]}
    assert infra_cause(metrics) == "1 infrastructure failure(s), first e1: RuntimeError: harness-side failure"

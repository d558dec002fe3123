"""Explicit-STOP semantics on real BabyAI levels."""

from __future__ import annotations

import os
import subprocess
import sys

from babyai_testkit import ROOT, FakeCtx, make_node
from executors.babyai import envs
from executors.babyai.oracle import oracle


def _sim(privileged=False):
    sim = make_node("babyai.Simulator", {"privileged_outputs": privileged}, "sim")
    return sim


def _oracle_actions(level: str, seed: int) -> list[int]:
    """The actions the oracle takes (bot + inserted dones), replayed from a fresh env."""
    from minigrid.utils.baby_ai_bot import BabyAIBot

    env = envs.make_env(level)
    envs.reset_env(env, seed)
    u = env.unwrapped
    bot, actions = BabyAIBot(u), []
    for _ in range(u.max_steps):
        if any(leaf.lastStepMatch for leaf in envs.pending_leaves(u.instrs)):
            action = u.actions.done
        else:
            action = bot.replan()
        actions.append(int(action))
        _, reward, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    assert reward > 0, "the oracle should solve this episode"
    return actions


def test_env_var_set_and_read_by_minigrid():
    assert os.environ["BABYAI_DONE_ACTIONS"] == "1"
    assert envs.explicit_stop_active()


def test_premature_done_fails_the_episode():
    sim, ctx = _sim(), FakeCtx()
    sim.reset_episode({"level": "BabyAI-GoToLocal-v0", "seed": 1}, ctx)
    sim.step({"actions": ["done"]}, ctx)
    assert sim.done()
    result = sim.result()
    assert result["success"] is False and result["reward"] == 0.0
    assert result["termination"] == "failure" and result["steps"] == 1


def test_done_right_after_goal_succeeds_and_late_done_fails():
    actions = _oracle_actions("BabyAI-GoToLocal-v0", 1)
    assert actions[-1] == 6  # done
    sim, ctx = _sim(), FakeCtx()
    sim.reset_episode({"level": "BabyAI-GoToLocal-v0", "seed": 1}, ctx)
    sim.step({"actions": actions}, ctx)
    result = sim.result()
    assert result["success"] and result["termination"] == "success"
    assert result["steps"] == len(actions)
    assert 0 < result["reward"] <= 1 and 0 < result["path_efficiency"] <= 1

    # the same path, then a turn away before `done`: the goal is no longer "just met"
    late = actions[:-1] + [0, 6]
    sim.reset_episode({"level": "BabyAI-GoToLocal-v0", "seed": 1}, ctx)
    sim.step({"actions": late}, ctx)
    assert sim.result()["termination"] == "failure"


def test_without_done_the_goal_alone_does_not_end_the_episode():
    actions = _oracle_actions("BabyAI-GoToLocal-v0", 1)
    sim, ctx = _sim(), FakeCtx()
    sim.reset_episode({"level": "BabyAI-GoToLocal-v0", "seed": 1}, ctx)
    sim.step({"actions": actions[:-1]}, ctx)
    assert not sim.done() and sim.result()["termination"] == "running"


def _sequence_seed(level: str) -> int:
    from minigrid.envs.babyai.core.verifier import AfterInstr, BeforeInstr

    env = envs.make_env(level)
    for seed in range(1000, 1100):
        envs.reset_env(env, seed)
        if isinstance(env.unwrapped.instrs, (BeforeInstr, AfterInstr)):
            return seed
    raise AssertionError("no sequence mission in 100 seeds")


def test_sequence_missions_need_the_verifier_fix():
    level = "BabyAI-GoToSeq-v0"
    seed = _sequence_seed(level)
    actions = _oracle_actions(level, seed)
    assert actions.count(6) >= 2  # one done per instruction part

    fixed = envs.make_env(level)
    envs.reset_env(fixed, seed)
    unfixed = envs.make_env(level)
    unfixed.reset(seed=seed)  # minigrid's own sequence verifiers
    outcomes = []
    for env in (fixed, unfixed):
        reward = 0.0
        for a in actions:
            _, reward, terminated, truncated, _ = env.step(a)
            if terminated or truncated:
                break
        outcomes.append(reward > 0)
    assert outcomes == [True, False]


def test_premature_done_in_a_sequence_fails():
    sim, ctx = _sim(privileged=True), FakeCtx()
    out = sim.reset_episode({"level": "BabyAI-GoToSeq-v0", "seed": _sequence_seed("BabyAI-GoToSeq-v0")}, ctx)
    assert len(out["verifier"]["pending"]) >= 1
    sim.step({"actions": ["left", "done"]}, ctx)
    assert sim.result()["termination"] == "failure"


def test_importing_minigrid_babyai_first_is_corrected_with_a_warning():
    code = ("import warnings; warnings.simplefilter('always')\n"
            "import minigrid.envs.babyai.core.verifier as V\n"
            "assert not V.use_done_actions\n"
            "import executors.babyai\n"
            "from executors.babyai import envs\n"
            "env = envs.make_env('BabyAI-GoToLocal-v0'); envs.reset_env(env, 1)\n"
            "_, reward, terminated, _, _ = env.step(env.unwrapped.actions.done)\n"
            "print(V.use_done_actions, terminated, reward)\n")
    env = {k: v for k, v in os.environ.items() if k != "BABYAI_DONE_ACTIONS"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "True", "0"]  # premature done ends the episode unrewarded
    assert "explicit STOP" in proc.stderr


def test_reset_keeps_stdout_clean(capfd):
    env = envs.make_env("BabyAI-GoTo-v0")
    for seed in range(12):  # some of these seeds make minigrid print "Sampling rejected"
        envs.reset_env(env, seed)
    assert capfd.readouterr().out == ""


def test_oracle_solves_sequences_with_explicit_stop():
    result = oracle({"level": "BabyAI-GoToSeq-v0", "seed": _sequence_seed("BabyAI-GoToSeq-v0")})
    assert result["success"] and result["termination"] == "success"

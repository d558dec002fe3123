"""The ceiling: minigrid's BabyAI bot on the same episode, returning a result
shaped like `GraphRunner.run_episode` (simulator figures under `metrics`).

The bot reads the true grid and the verifier, so it is not a fair agent. Under
explicit STOP it must also say `done` after every instruction part; the bot only
says it at the very end, so `done` is inserted whenever the verifier reports a
pending part met by the last action (privileged, like the bot itself).

The oracle gets the candidates' caps: the episode's step budget, and its wall
budget (`wall_seconds`), enforced even inside one planning call of the bot
(which can loop without end on some levels, e.g. BabyAI-Unlock-v0 seed 10002):
past the deadline the episode ends as a failure with termination `wall_time`.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback

from executors.babyai import envs

_local = threading.local()


def _env(level: str):
    cache = getattr(_local, "envs", None)
    if cache is None:
        cache = _local.envs = {}
    if level not in cache:
        cache[level] = envs.make_env(level)
    return cache[level]


class _OutOfTime(Exception):
    pass


class _Deadline:
    """A trace function (function calls only) that raises once the deadline passed."""

    def __init__(self, seconds: float | None):
        self.deadline = None if seconds is None else time.perf_counter() + float(seconds)

    def __call__(self, frame, event, arg):
        if time.perf_counter() > self.deadline:
            raise _OutOfTime()
        return None


def oracle(episode: dict) -> dict:
    from minigrid.utils.baby_ai_bot import BabyAIBot

    started = time.perf_counter()
    env = _env(episode["level"])
    obs = envs.reset_env(env, episode["seed"])
    u = env.unwrapped
    caps = [u.max_steps, episode.get("max_steps")]
    budget = min(int(c) for c in caps if c is not None)
    shortest = envs.shortest_path_length(env)
    steps, reward, status, error, actions = 0, 0.0, "max_steps", None, []
    deadline = _Deadline(episode.get("wall_seconds"))
    try:
        if deadline.deadline is not None:
            sys.settrace(deadline)
        bot = BabyAIBot(u)
        while steps < budget:
            if any(leaf.lastStepMatch for leaf in envs.pending_leaves(u.instrs)):
                action = u.actions.done
            else:
                action = bot.replan()
            obs, reward, terminated, truncated, _ = env.step(action)
            actions.append(u.actions(action).name)
            steps += 1
            if terminated:
                status = "success" if reward > 0 else "failure"
                break
            if truncated:
                status = "env_max_steps"
                break
    except _OutOfTime:
        status = "wall_time"
    except Exception as exc:  # the bot raises on some levels: an oracle failure, recorded
        status, error = "oracle_error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
    finally:
        sys.settrace(None)
    success = status == "success"
    metrics = {"path_efficiency": min(1.0, shortest / max(steps, 1)) if success and shortest else 0.0,
               "shortest_path": shortest, "steps": steps, "termination": status, "level": episode["level"],
               "seed": episode["seed"], "mission": obs["mission"]}
    # shaped like GraphRunner.run_episode's result, so evaluation treats both alike
    return {"success": success, "reward": float(reward) if success else 0.0, "steps": steps, "ticks": steps,
            "termination": "success" if success else ("node_error" if error else
                                                      "wall_time" if status == "wall_time" else "sim_done"),
            "error": error, "metrics": metrics, "model_calls": 0, "input_tokens": 0, "output_tokens": 0,
            "cost_usd": 0.0, "wall_seconds": time.perf_counter() - started, "actions": actions}

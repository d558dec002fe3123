"""BabyAI tiers: the generic expansion (explicit (level, seed) episodes, then
`generate` blocks), with integer seeds and the tier's `slip` (the stochastic
mode, see envs.py) on every episode; and each episode's content fingerprint
(two level ids may generate the same mission on the same seed: BossLevel and
SynthSeq do)."""

from __future__ import annotations

import hashlib

from harness.executor_api import expand_episodes


def expand_tier(spec: dict) -> list[dict]:
    out = expand_episodes(spec)
    for episode in out:
        episode["seed"] = int(episode["seed"])
        if spec.get("slip"):
            episode["slip"] = float(spec["slip"])
    return out


_ENVS: dict = {}


def episode_content(episode: dict) -> str:
    """sha256 of the mission, the initial grid and the agent's start pose."""
    from executors.babyai.envs import make_env, reset_env

    env = _ENVS.get(episode["level"]) or _ENVS.setdefault(episode["level"], make_env(episode["level"]))
    reset_env(env, episode["seed"])
    world = env.unwrapped
    pose = f"{tuple(int(v) for v in world.agent_pos)}:{int(world.agent_dir)}"
    return hashlib.sha256(world.mission.encode() + b"\0" + world.grid.encode().tobytes() + b"\0"
                          + pose.encode()).hexdigest()

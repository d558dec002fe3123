"""BabyAI tiers: the generic expansion (explicit (level, seed) episodes, then
`generate` blocks), with integer seeds and the tier's `slip` (the stochastic
mode, see envs.py) on every episode."""

from __future__ import annotations

from harness.executor_api import expand_episodes


def expand_tier(spec: dict) -> list[dict]:
    out = expand_episodes(spec)
    for episode in out:
        episode["seed"] = int(episode["seed"])
        if spec.get("slip"):
            episode["slip"] = float(spec["slip"])
    return out

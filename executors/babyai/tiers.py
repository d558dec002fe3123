"""BabyAI tier expansion: explicit (level, seed) episodes, then `generate`
blocks (every level x a seed range), with per-level step caps."""

from __future__ import annotations


def expand_tier(spec: dict, budgets: dict) -> list[dict]:
    out: list[dict] = [{"level": item["level"], "seed": int(item["seed"])} for item in spec.get("episodes", [])]
    for block in spec.get("generate", []):
        start = int(block["seed_start"])
        for level in block["levels"]:
            out.extend({"level": level, "seed": seed} for seed in range(start, start + int(block["count"])))
    per_level = budgets.get("max_steps_per_level", {})
    for episode in out:
        if episode["level"] in per_level:
            episode["max_steps"] = int(per_level[episode["level"]])
        if spec.get("slip"):  # the stochastic mode (see executors/babyai/envs.py)
            episode["slip"] = float(spec["slip"])
    return out

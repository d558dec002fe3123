"""The textual gradient of a candidate: a per-step judge (temperature 0) over a
minibatch of train rollouts, a per-episode summariser (temperature 0) merging
the judgements with the metadata and outcome, and aggregate statistics.

Judge calls run concurrently within the judge profile's concurrency, and each
episode's summary starts as soon as its own judgements are in.
"""

from __future__ import annotations

import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from harness.variants.shaper import prompts
from harness.variants.shaper.config import ShaperConfig


def sample_minibatch(episode_ids: list[str], size: int, seed: int, key: str) -> list[str]:
    """`size` episodes drawn without replacement; the same (seed, key) gives the same draw."""
    ordered = sorted(episode_ids)
    return sorted(random.Random(f"{seed}:{key}").sample(ordered, min(size, len(ordered))))


def aggregate_statistics(rollouts: list[dict], judgements: list[list[dict]]) -> dict:
    n = len(rollouts)
    commands, verdicts = Counter(), Counter()
    chunk_lengths, repeated = [], 0
    for rollout, judged in zip(rollouts, judgements):
        commands.update(rollout["meta"]["commands"])
        chunk_lengths += rollout["meta"]["chunk_lengths"]
        repeated += sum(1 for count in rollout["meta"]["subgoals"].values() if count >= 3)
        verdicts.update(j["verdict"] for j in judged)
    return {
        "episodes": n,
        "success_rate": round(sum(r["success"] for r in rollouts) / n, 4) if n else 0.0,
        "mean_reward": round(sum(r["reward"] for r in rollouts) / n, 4) if n else 0.0,
        "mean_env_steps": round(sum(r["meta"]["env_steps"] for r in rollouts) / n, 2) if n else 0.0,
        "mean_planner_steps": round(sum(r["meta"]["planner_steps"] for r in rollouts) / n, 2) if n else 0.0,
        "command_frequencies": dict(sorted(commands.items())),
        "mean_chunk_length": round(sum(chunk_lengths) / len(chunk_lengths), 2) if chunk_lengths else 0.0,
        "empty_chunks": sum(1 for length in chunk_lengths if length == 0),
        "parse_errors": sum(r["meta"]["parse_errors"] for r in rollouts),
        "runtime_errors": sum(len(r["meta"]["runtime_errors"]) for r in rollouts),
        "repeated_subgoals": repeated,
        "verdicts": dict(sorted(verdicts.items())),
    }


def gradient_text(episodes: list[dict], stats: dict) -> str:
    lines = ["### Aggregate statistics"]
    lines += [f"- {key}: {value}" for key, value in stats.items()]
    for episode in episodes:
        outcome = "success" if episode["success"] else "failure"
        lines += ["", f"### Episode {episode['episode_id']}: {outcome}, reward {episode['reward']:.3f}",
                  episode["summary"].strip()]
        errors = episode["meta"]["runtime_errors"]
        if errors:
            lines.append("Runtime errors: " + " | ".join(errors[:3]))
    return "\n".join(lines) + "\n"


def assemble(rollouts: list[dict], judgements: dict, summaries: dict) -> dict:
    """The gradient of a minibatch from its rollouts, the judgements {episode_id: [{step, verdict, note}]}
    and the summaries {episode_id: text}."""
    episodes = [{"episode_id": r["episode_id"], "success": r["success"], "reward": r["reward"],
                 "judgements": judgements.get(r["episode_id"], []), "summary": summaries[r["episode_id"]].strip(),
                 "meta": r["meta"]} for r in rollouts]
    stats = aggregate_statistics(rollouts, [e["judgements"] for e in episodes])
    return {"episodes": episodes, "stats": stats, "text": gradient_text(episodes, stats)}


def diagnose(rollouts: list[dict], roles, round_number: int, config: ShaperConfig) -> dict:
    """Judge every (up to `max_judged_steps`) step, summarise every episode, assemble the gradient."""
    judge_pool = ThreadPoolExecutor(max_workers=roles.concurrency("judge"))

    def judge(rollout: dict) -> list[dict]:
        steps = rollout["steps"][:config.max_judged_steps]

        def one(indexed):
            index, step = indexed
            reply = roles.ask("judge", round_number, system=prompts.JUDGE_SYSTEM,
                              messages=prompts.judge_messages(rollout["mission"], step, index, len(rollout["steps"])),
                              temperature=config.judge_temperature)
            return dict(prompts.parse_judgement(reply), step=index)

        return list(judge_pool.map(one, enumerate(steps, start=1)))

    def episode(rollout: dict) -> tuple[list[dict], str]:
        judged = judge(rollout)
        summary = roles.ask("summariser", round_number, system=prompts.SUMMARISER_SYSTEM,
                            messages=prompts.summariser_messages(rollout, judged),
                            temperature=config.summariser_temperature)
        return judged, summary

    try:
        with ThreadPoolExecutor(max_workers=max(1, min(len(rollouts), roles.concurrency("summariser")))) as pool:
            done = list(pool.map(episode, rollouts))
    finally:
        judge_pool.shutdown(wait=True)
    ids = [r["episode_id"] for r in rollouts]
    return assemble(rollouts, {e: d[0] for e, d in zip(ids, done)}, {e: d[1] for e, d in zip(ids, done)})

"""Beam bookkeeping: candidate identity, paired comparison on the shared
validation episodes, the two rankings (the study's mean reward; paired wins
minus losses), per-category regression against the seed, and selection.

Paired comparisons go through `harness.evaluation.paired.compare` on the
episodes both candidates ran (exact McNemar for 0/1 values, a paired bootstrap
CI of the mean reward difference otherwise), at confidence 1 − `alpha`.
"""

from __future__ import annotations

import hashlib

from harness.variants.shaper.rollout import category


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def candidate_id(skill: str, harness: str) -> str:
    """Exact-text identity of a (skill, harness) pair: equal texts, equal id."""
    return "c" + hashlib.sha256(f"{text_sha(skill)}:{text_sha(harness)}".encode()).hexdigest()[:12]


def paired_verdict(a: dict, b: dict, alpha: float) -> dict:
    """Candidate a against b: per-episode rewards {episode_id: reward} on their shared episodes."""
    from harness.evaluation.paired import compare

    shared = sorted(set(a) & set(b))
    result = compare([b[e] for e in shared], [a[e] for e in shared], metric="reward", confidence=1 - alpha)
    diffs = [a[e] - b[e] for e in shared]
    return {"verdict": result.verdict, "test": result.test, "p_value": result.p_value,
            "ci_low": result.ci_low, "ci_high": result.ci_high, "episodes": len(shared),
            "wins": sum(d > 0 for d in diffs), "losses": sum(d < 0 for d in diffs),
            "mean_difference": round(result.delta or 0.0, 6)}


def mean_reward(rewards: dict) -> float:
    return sum(rewards.values()) / len(rewards) if rewards else 0.0


def rank(ids: list[str], rewards: dict, alpha: float) -> list[dict]:
    """Order candidates by paired wins minus losses against every other one, then mean
    reward, then their order in `ids` (incumbents first, so a tie keeps them)."""
    rows = []
    for position, cid in enumerate(ids):
        net = 0
        for other in ids:
            if other != cid:
                verdict = paired_verdict(rewards[cid], rewards[other], alpha)["verdict"]
                net += {"better": 1, "worse": -1}.get(verdict, 0)
        rows.append({"candidate": cid, "paired_net": net, "mean_reward": round(mean_reward(rewards[cid]), 6),
                     "position": position})
    rows.sort(key=lambda r: (-r["paired_net"], -r["mean_reward"], r["position"]))
    return [{k: v for k, v in row.items() if k != "position"} for row in rows]


def rank_by_mean(ids: list[str], rewards: dict) -> list[dict]:
    """The study's ranking: mean validation reward, ties in the order of `ids` (incumbents first)."""
    rows = [{"candidate": cid, "paired_net": None, "mean_reward": round(mean_reward(rewards[cid]), 6)} for cid in ids]
    return sorted(rows, key=lambda row: -row["mean_reward"])


def category_means(rewards: dict) -> dict:
    sums: dict[str, list[float]] = {}
    for episode_id, reward in rewards.items():
        sums.setdefault(category(episode_id), []).append(reward)
    return {name: round(sum(values) / len(values), 6) for name, values in sorted(sums.items())}


def regression_report(rewards: dict, seed_rewards: dict, margin: float) -> dict:
    """Per-category mean reward against the seed; refused when any category drops by more than `margin`."""
    mine, seed = category_means(rewards), category_means(seed_rewards)
    categories = []
    for name in sorted(set(mine) & set(seed)):
        delta = round(mine[name] - seed[name], 6)
        categories.append({"category": name, "seed": seed[name], "candidate": mine[name], "delta": delta,
                           "regressed": delta < -margin})
    regressed = [c["category"] for c in categories if c["regressed"]]
    return {"categories": categories, "regressed": regressed, "refused": bool(regressed)}


def select(ranked: list[dict], reports: dict) -> tuple[str, list[str]]:
    """The best-ranked candidate no regression refuses, and the ones passed over for it."""
    passed_over = []
    for row in ranked:
        if not reports[row["candidate"]]["refused"]:
            return row["candidate"], passed_over
        passed_over.append(row["candidate"])
    raise ValueError("every candidate regresses against the seed, the seed included")

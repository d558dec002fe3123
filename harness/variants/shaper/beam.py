"""Beam bookkeeping: candidate identity, paired comparison on the shared
validation episodes, ranking, per-category regression against the seed, and
selection.

The paired test is a minimal one kept here (exact two-sided sign test on the
per-episode reward differences of the episodes both candidates ran); it decides
better / worse / indistinguishable at level `alpha`.
"""

from __future__ import annotations

import hashlib

from scipy.stats import binomtest

from harness.variants.shaper.rollout import category


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def candidate_id(skill: str, harness: str) -> str:
    """Exact-text identity of a (skill, harness) pair: equal texts, equal id."""
    return "c" + hashlib.sha256(f"{text_sha(skill)}:{text_sha(harness)}".encode()).hexdigest()[:12]


def paired_verdict(a: dict, b: dict, alpha: float) -> dict:
    """Compare per-episode rewards {episode_id: reward} of a against b on their shared episodes."""
    shared = sorted(set(a) & set(b))
    diffs = [a[e] - b[e] for e in shared]
    wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    p = binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
    verdict = "indistinguishable"
    if p < alpha:
        verdict = "better" if wins > losses else "worse"
    mean = sum(diffs) / len(diffs) if diffs else 0.0
    return {"verdict": verdict, "p_value": round(float(p), 6), "episodes": len(shared), "wins": wins,
            "losses": losses, "mean_difference": round(mean, 6)}


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

"""EQA episodes for the tier audit and for certification reruns.

- `episode_content`: what makes two questions the same task: the scan, the
  start pose, the question text, the choices in their order and the answer.
- `fresh_episodes`: for each question of a tier, a question of the same R2R
  split (train or val_unseen: the development scans, `draw_tiers`) that no tier
  of the profile uses, drawn with the draw number as seed, with its own step
  budget. The sealed holdout's scans are R2R's test scans, in neither split, so
  no fresh question comes from them.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from harness.errors import UserError

DEVELOPMENT_SPLITS = ("train", "val_unseen")


def episode_content(episode: dict) -> str:
    """sha256 of the scan, start pose, question, choices and answer"""
    from executors.eqa.questions import question_set

    q = question_set().question(episode["question_id"])
    task = [q["scan"], q["start"]["viewpoint"], round(float(q["start"]["heading"]), 6), q["question"],
            q["choices"], q["answer"]]
    return hashlib.sha256(json.dumps(task).encode()).hexdigest()


def _split_of_scans(questions) -> dict[str, str]:
    return {item["scan"]: split for split in DEVELOPMENT_SPLITS for item in questions.r2r.split(split).values()}


def fresh_episodes(episodes: list[dict], draw: int, used: list[dict]) -> list[dict]:
    """unused questions of the same R2R split (train or val_unseen scans, never the holdout's), seeded by the draw"""
    from executors.eqa.questions import question_set

    questions = question_set()
    split_of = _split_of_scans(questions)
    taken = {e["question_id"] for e in used if "question_id" in e}

    def split(question_id: str) -> str | None:
        return split_of.get(questions.question(question_id)["scan"])

    outside = [e["question_id"] for e in episodes if split(e["question_id"]) is None]
    if outside:
        raise UserError(f"EQA: {len(outside)} question(s) of the tier (e.g. {outside[0]}) are on scans outside R2R "
                        "train and val_unseen (the holdout's): no fresh questions are drawn for them")
    out = [dict(e) for e in episodes]
    rng = np.random.default_rng(draw)
    for name in DEVELOPMENT_SPLITS:
        positions = [i for i, e in enumerate(episodes) if split(e["question_id"]) == name]
        if not positions:
            continue
        pool = sorted((q for q in questions.all() if split_of.get(q["scan"]) == name and q["question_id"] not in taken),
                      key=lambda q: q["question_id"])
        if len(pool) < len(positions):
            raise UserError(f"EQA {name} scans: {len(pool)} questions no tier uses, {len(positions)} fresh ones needed")
        for position, pick in zip(positions, rng.choice(len(pool), len(positions), replace=False)):
            q = pool[int(pick)]
            out[position].update(question_id=q["question_id"], max_steps=q["max_steps"],
                                 episode_id=f"{q['question_id']}~fresh{draw}")
    return out

"""Draw the eqa tiers from the question set (the lists in profile.yaml came from this).

Split by scan: the sealed holdout is every question of the 18 scans outside R2R's
train and val_unseen splits (R2R's test scans), which no other tier uses. The
search tier is a seeded draw of 100 questions on the other 72 scans, the
calibration tier (for the stopping threshold, `executors.eqa.calibrate`) 100
further ones. The smoke tier is one question of each kind on the four small scans
of the test fixture. Every episode carries its question's step budget.

    python -m executors.eqa.draw_tiers          # prints the tiers as YAML
"""

from __future__ import annotations

import sys

import yaml

from executors.eqa.questions import Draw, QuestionSet, question_set
from executors.mp3d import data_r2r

SEARCH_SIZE = 100
CALIBRATION_SIZE = 100
SMOKE = ["GdvgFV5R1Z5-04", "GdvgFV5R1Z5-02", "pLe4wQe7qrG-01", "gZ6f7yhEvPG-01", "8194nk5LbLH-03"]


def holdout_scans(questions: QuestionSet) -> set[str]:
    r2r = questions.r2r
    development = {item["scan"] for split in ("train", "val_unseen") for item in r2r.split(split).values()}
    return set(questions.scans()) - development


def draw(questions: QuestionSet) -> dict:
    sealed = holdout_scans(questions)
    pool = sorted((q for q in questions.all() if q["scan"] not in sealed), key=lambda q: q["question_id"])
    search = sorted(Draw("eqa-tiers/v1/search").sample(pool, SEARCH_SIZE), key=lambda q: q["question_id"])
    taken = {q["question_id"] for q in search}
    rest = [q for q in pool if q["question_id"] not in taken]
    calibration = sorted(Draw("eqa-tiers/v1/calibration").sample(rest, CALIBRATION_SIZE),
                         key=lambda q: q["question_id"])
    holdout = sorted((q for q in questions.all() if q["scan"] in sealed), key=lambda q: q["question_id"])
    smoke = [questions.question(qid) for qid in SMOKE]
    return {name: [{"question_id": q["question_id"], "max_steps": q["max_steps"]} for q in tier]
            for name, tier in (("smoke", smoke), ("search", search), ("calibration", calibration),
                               ("holdout", holdout))}


if __name__ == "__main__":
    data_r2r.require(["R2R/R2R_train.json", "R2R/R2R_val_unseen.json"])
    yaml.safe_dump(draw(question_set()), sys.stdout, default_flow_style=None, width=120, sort_keys=False)

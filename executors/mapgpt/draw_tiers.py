"""Draw the mapgpt tiers from the R2R data (the lists in profile.yaml came from this).

MapGPT evaluated 216 instructions over 72 scenes (R2R train's 61 scans plus
val_unseen's 11) and did not publish its list. The reconstruction: one path per
scan, drawn with a fixed seed, and all three of its instructions (72 x 3 =
216); the search tier is a seeded draw of 100 of those. The sealed holdout is
200 further val_unseen instructions from paths outside that set. The smoke
tier is 5 instructions from the four small scans of the test fixture.

SHAPER's splits (`draw_shaper`) use no path of those tiers and none twice:
train (15) and validation (24) are one instruction each of further R2R train
paths; the sealed test splits are 200 instructions each, C1 from val_seen
(the training scans, new paths: the same distribution) and C2 from val_unseen
(scans never seen in training).

    python -m executors.mapgpt.draw_tiers          # prints the tiers as YAML
"""

from __future__ import annotations

import sys

import numpy as np
import yaml

from executors.mp3d import data_r2r as D

SEED = 2024
SEARCH_SIZE = 100
HOLDOUT_SIZE = 200
SHAPER_SEED = 2025
SHAPER_SIZES = {"shaper_train": 15, "shaper_val": 24, "shaper_test_c1": 200, "shaper_test_c2": 200}
SMOKE = [("train", "gZ6f7yhEvPG"), ("train", "GdvgFV5R1Z5"), ("val_unseen", "pLe4wQe7qrG"),
         ("val_unseen", "8194nk5LbLH"), ("val_unseen", "pLe4wQe7qrG")]


def by_scan(items: dict) -> dict[str, list[int]]:
    paths: dict[str, list[int]] = {}
    for item in items.values():
        ids = paths.setdefault(item["scan"], [])
        if item["path_id"] not in ids:
            ids.append(item["path_id"])
    return {scan: sorted(ids) for scan, ids in sorted(paths.items())}


def draw(ds: D.Dataset) -> dict:
    rng = np.random.default_rng(SEED)
    chosen = []
    for split in ("train", "val_unseen"):
        for scan, path_ids in by_scan(ds.split(split)).items():
            path_id = path_ids[int(rng.integers(len(path_ids)))]
            chosen += [(split, f"{path_id}_{j}") for j in range(3)]
    search = [chosen[i] for i in sorted(rng.choice(len(chosen), SEARCH_SIZE, replace=False))]
    used_paths = {instr.split("_")[0] for split, instr in chosen if split == "val_unseen"}
    rest = sorted(i for i in ds.split("val_unseen") if i.split("_")[0] not in used_paths)
    holdout = [("val_unseen", rest[i]) for i in sorted(rng.choice(len(rest), HOLDOUT_SIZE, replace=False))]
    smoke, taken = [], set()
    for split, scan in SMOKE:
        instr = next(i for i, it in sorted(ds.split(split).items())
                     if it["scan"] == scan and i not in taken and (split, i) not in holdout)
        taken.add(instr)
        smoke.append((split, instr))
    return {name: [{"split": s, "instr_id": i} for s, i in tier]
            for name, tier in (("smoke", smoke), ("search", search), ("holdout", holdout))}


def path_of(instr_id: str) -> str:
    return instr_id.split("_")[0]


def draw_shaper(ds: D.Dataset, tiers: dict) -> dict:
    """SHAPER's train/validation/test tiers, sharing no R2R path with `tiers` (the drawn ones)."""
    rng = np.random.default_rng(SHAPER_SEED)
    used = {path_of(e["instr_id"]) for tier in tiers.values() for e in tier}
    train_paths = sorted({path_of(i) for i in ds.split("train")} - used, key=int)
    train, val = SHAPER_SIZES["shaper_train"], SHAPER_SIZES["shaper_val"]
    picked = [train_paths[i] for i in rng.choice(len(train_paths), train + val, replace=False)]
    fit = [("train", f"{path}_{int(rng.integers(3))}") for path in picked]
    out = {"shaper_train": fit[:train], "shaper_val": fit[train:]}
    for name, split in (("shaper_test_c1", "val_seen"), ("shaper_test_c2", "val_unseen")):
        pool = sorted((i for i in ds.split(split) if path_of(i) not in used),
                      key=lambda i: tuple(map(int, i.split("_"))))
        out[name] = [(split, pool[i]) for i in sorted(rng.choice(len(pool), SHAPER_SIZES[name], replace=False))]
    return {name: [{"split": s, "instr_id": i} for s, i in tier] for name, tier in out.items()}


if __name__ == "__main__":
    dataset = D.dataset()
    drawn = draw(dataset)
    yaml.safe_dump({**drawn, **draw_shaper(dataset, drawn)}, sys.stdout, default_flow_style=None, width=120)

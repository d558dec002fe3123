"""Draw the smartway tiers from the R2R data (the lists in profile.yaml came from this).

SmartWay reports R2R-CE val_unseen; its discrete-graph port draws from R2R
val_unseen: the search tier is 100 paths drawn with a fixed seed, one of each
path's three instructions drawn too; the sealed holdout is 200 instructions of
other paths. The smoke tier is 5 instructions on the four small scans of the
test fixture (those of the mapgpt smoke tier).

    python -m executors.smartway.draw_tiers          # prints the tiers as YAML
"""

from __future__ import annotations

import sys

import numpy as np
import yaml

from executors.mp3d import data_r2r as D

SEED = 2025
SEARCH_SIZE = 100
HOLDOUT_SIZE = 200
SMOKE = [("train", "1304_0"), ("train", "1118_0"), ("val_unseen", "1654_0"), ("val_unseen", "1141_0"),
         ("val_unseen", "1654_1")]


def draw(ds: D.Dataset) -> dict:
    rng = np.random.default_rng(SEED)
    items = ds.split("val_unseen")
    paths = sorted({item["path_id"] for item in items.values()})
    chosen = sorted(int(p) for p in rng.choice(paths, SEARCH_SIZE, replace=False))
    search = [("val_unseen", f"{p}_{int(rng.integers(3))}") for p in chosen]
    rest = sorted(i for i, item in items.items() if item["path_id"] not in set(chosen))
    holdout = [("val_unseen", rest[i]) for i in sorted(rng.choice(len(rest), HOLDOUT_SIZE, replace=False))]
    return {name: [{"split": s, "instr_id": i} for s, i in tier]
            for name, tier in (("smoke", SMOKE), ("search", search), ("holdout", holdout))}


if __name__ == "__main__":
    yaml.safe_dump(draw(D.dataset()), sys.stdout, default_flow_style=None, width=120, sort_keys=False)

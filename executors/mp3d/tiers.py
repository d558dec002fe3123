"""What makes two R2R-family episodes the same task, for the tier audit
(`ExecutorSpec.episode_content`, harness.rundir.tiers.audit_tier): the scan, the
path (start to goal), the start heading and the instruction text (whitespace
collapsed). R2R holds a few such twins under two instruction ids of one path
(train 5487_0 = 5487_2, val_unseen 1894_0 = 1894_1)."""

from __future__ import annotations

import hashlib
import json


def episode_content(episode: dict) -> str:
    """sha256 of the scan, path, start heading and instruction text"""
    from executors.mp3d import data_r2r

    item = data_r2r.dataset().episode(episode["split"], episode["instr_id"])
    task = [item["scan"], item["path"], item["heading"], " ".join(item["instruction"].split())]
    return hashlib.sha256(json.dumps(task).encode()).hexdigest()

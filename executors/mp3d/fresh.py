"""Fresh R2R episodes for certification reruns of a deterministic agent: for
each episode of a tier, an instruction of the same split that no tier of the
profile uses, on a path no tier uses (another instruction of a used path
describes the same route), drawn with the draw number as seed."""

from __future__ import annotations

import numpy as np

from harness.errors import UserError


def _path(instr_id: str) -> str:
    return str(instr_id).rsplit("_", 1)[0]


def fresh_episodes(episodes: list[dict], draw: int, used: list[dict]) -> list[dict]:
    """unused instructions of the same R2R split, on paths no tier uses (seeded by the draw)"""
    from executors.mp3d import data_r2r

    ds = data_r2r.dataset()
    used_paths = {(e.get("split"), _path(e["instr_id"])) for e in used if "instr_id" in e}
    out = [dict(e) for e in episodes]
    for split in sorted({e["split"] for e in episodes}):
        positions = [i for i, e in enumerate(episodes) if e["split"] == split]
        pool = sorted(i for i in ds.split(split) if (split, _path(i)) not in used_paths)
        if len(pool) < len(positions):
            raise UserError(f"R2R {split}: {len(pool)} unused instructions, {len(positions)} fresh ones needed")
        chosen = np.random.default_rng(draw).choice(len(pool), len(positions), replace=False)
        for position, pick in zip(positions, chosen):
            out[position].update(instr_id=pool[int(pick)],
                                 episode_id=f"{pool[int(pick)]}~fresh{draw}")
    return out

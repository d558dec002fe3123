"""The voxel workspace of the VoxPoser chain: grid geometry, value maps and the
helpers model-written LMP code may call (numpy-like, no file or module access)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from scipy import ndimage

# robosuite's table top is at z = 0.8 m, the Panda base at x = -0.56 m
BOUNDS_MIN = np.array([-0.30, -0.45, 0.78])
BOUNDS_MAX = np.array([0.35, 0.45, 1.30])


class Grid:
    """An axis-aligned grid of `n`^3 voxels over a workspace box (default: robosuite's table)."""

    def __init__(self, n: int = 40, low=BOUNDS_MIN, high=BOUNDS_MAX):
        self.n = int(n)
        self.low, self.high = np.asarray(low, float), np.asarray(high, float)
        self.size = (self.high - self.low) / self.n

    def to_voxel(self, position) -> tuple[int, int, int]:
        index = np.floor((np.asarray(position, float) - self.low) / self.size).astype(int)
        return tuple(int(v) for v in np.clip(index, 0, self.n - 1))

    def to_world(self, voxel) -> np.ndarray:
        return self.low + (np.asarray(voxel, float) + 0.5) * self.size

    def empty(self, fill: float = 0.0) -> np.ndarray:
        return np.full((self.n, self.n, self.n), float(fill))

    def ball(self, position, radius_m: float) -> np.ndarray:
        """Boolean mask of the voxels whose centres lie within `radius_m` of `position`
        (at least the voxel holding `position`)."""
        axes = [self.low[i] + (np.arange(self.n) + 0.5) * self.size[i] for i in range(3)]
        p = np.asarray(position, float)
        d2 = ((axes[0][:, None, None] - p[0]) ** 2 + (axes[1][None, :, None] - p[1]) ** 2
              + (axes[2][None, None, :] - p[2]) ** 2)
        mask = d2 <= radius_m ** 2
        mask[self.to_voxel(p)] = True
        return mask

    def target_point(self, value_map: np.ndarray) -> np.ndarray:
        """World position of the map's best voxels (their centroid, so a symmetric
        region recovers its centre below voxel resolution)."""
        best = np.argwhere(value_map >= value_map.max() - 1e-9)
        return self.to_world(best.mean(axis=0))

    def distance_to(self, value_map: np.ndarray) -> np.ndarray:
        """Metres from every voxel to the nearest best voxel of the map."""
        targets = value_map >= value_map.max() - 1e-9
        return ndimage.distance_transform_edt(~targets, sampling=self.size)


def numpy_helpers() -> SimpleNamespace:
    """The `np` an LMP program sees: array maths only (no I/O, no module access)."""
    names = ("array", "zeros", "ones", "full", "clip", "mean", "max", "min", "argmax", "argmin", "abs", "sqrt",
             "exp", "where", "stack", "concatenate", "linspace", "arange", "round", "floor", "ceil", "sum",
             "dot", "cross", "cos", "sin", "arctan2", "isclose", "zeros_like", "ones_like", "maximum", "minimum")
    helpers = {name: getattr(np, name) for name in names}
    helpers.update(pi=np.pi, norm=np.linalg.norm, linalg=SimpleNamespace(norm=np.linalg.norm))
    return SimpleNamespace(**helpers)


def smooth(mask: np.ndarray, sigma_voxels: float = 1.5) -> np.ndarray:
    """A 0/1 map blurred so costs fall off around obstacles."""
    if not mask.any():
        return np.zeros_like(mask, dtype=float)
    blurred = ndimage.gaussian_filter(mask.astype(float), sigma_voxels)
    return blurred / blurred.max()


STEERING_CONFIG = {
    "lookahead_m": {"type": "number", "minimum": 0, "default": 0.03,
                    "description": "steer to the first waypoint at least this far away"},
    "gain": {"type": "number", "exclusiveMinimum": 0, "default": 1.0,
             "description": "action = gain * offset / 5 cm, clipped to [-1, 1]"},
    "chunk": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1,
              "description": "actions per tick (the same offset split evenly)"},
}


def steer(eef: np.ndarray, plan: dict, config: dict) -> np.ndarray:
    """The translation part of an end-effector delta action: toward the first waypoint at
    least `lookahead_m` away (else the last; the current position when there are none),
    gain x offset / 5 cm / chunk, clipped per axis to [-1, 1], times the planned speed."""
    points = [np.asarray(p, float) for p in plan["points"]] or [eef]
    goal = next((p for p in points if np.linalg.norm(p - eef) >= config["lookahead_m"]), points[-1])
    move = np.clip(config["gain"] * (goal - eef) / 0.05 / config["chunk"], -1.0, 1.0)
    return move * float(plan.get("speed", 1.0))

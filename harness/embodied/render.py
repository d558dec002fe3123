"""The episode viewer's picture of a robot-arm episode (harness/report), for
the manipulation and LIBERO executors: the agentview camera frame the
simulator output at the tick when the episode rendered one (logged in full),
else a 3-D plot (matplotlib) of the end effector's path up to the tick and
the objects where the simulator placed them at the tick."""

from __future__ import annotations

import io

import numpy as np

CAMERA = "agentview"
MAX_PLOTS = 40  # 3-D plots per episode (each takes a fraction of a second); ticks between two show the earlier


def _frame(observation: dict):
    image = (observation.get("images") or {}).get(CAMERA) if isinstance(observation.get("images"), dict) else None
    if isinstance(image, np.ndarray) and image.ndim == 3 and image.shape[2] in (3, 4):
        return image
    return None


def _position(value) -> np.ndarray | None:
    if isinstance(value, dict):
        value = value.get("position")
    try:
        point = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        return None
    return point[:3] if point.size >= 3 and np.isfinite(point[:3]).all() else None


def _objects(observation: dict) -> dict[str, np.ndarray]:
    found = observation.get("objects")
    if not isinstance(found, dict):
        return {}
    return {str(name): p for name, v in found.items() if (p := _position(v)) is not None}


def _png(write) -> dict:
    buffer = io.BytesIO()
    write(buffer)
    return {"png": buffer.getvalue()}


def render_episode(data) -> list[dict]:
    """One picture per tick of `data` (harness.report.episode_data.EpisodeData)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    instruction = next((t.observation.get("instruction") for t in data.ticks
                        if isinstance(t.observation.get("instruction"), str)), "")
    if all(_frame(t.observation) is not None for t in data.ticks):
        return [dict(_png(lambda b, t=t: plt.imsave(b, _frame(t.observation), format="png")),
                     caption=f"{CAMERA} camera, tick {t.tick}: {instruction}") for t in data.ticks]
    path = [_position(t.observation.get("gripper")) for t in data.ticks]
    objects = [_objects(t.observation) for t in data.ticks]
    points = [p for p in path if p is not None] + [p for o in objects for p in o.values()]
    low, high = (np.min(points, axis=0) - 0.05, np.max(points, axis=0) + 0.05) if points else (-np.ones(3), np.ones(3))
    fig = plt.figure(figsize=(5, 4.2), dpi=80)
    ax = fig.add_subplot(projection="3d")
    stride = -(-len(data.ticks) // MAX_PLOTS)
    frames = []
    try:
        for k, tick in enumerate(data.ticks):
            if k % stride:
                frames.append(dict(frames[-1], caption=f"tick {tick.tick} (the plot shows tick "
                                                       f"{data.ticks[k - k % stride].tick}) · {instruction}"))
                continue
            ax.cla()
            walked = np.array([p for p in path[:k + 1] if p is not None]).reshape(-1, 3)
            if len(walked):
                ax.plot(walked[:, 0], walked[:, 1], walked[:, 2], color="#1f77b4", lw=2, label="end effector")
                ax.scatter(*walked[-1], color="#d62728", s=40)
            for name, p in objects[k].items():
                ax.scatter(*p, color="#2ca02c", s=30, marker="s")
                ax.text(*p, name, fontsize=7)
            ax.set(xlim=(low[0], high[0]), ylim=(low[1], high[1]), zlim=(low[2], high[2]),
                   xlabel="x (m)", ylabel="y (m)", zlabel="z (m)")
            ax.set_title(f"tick {tick.tick}: end effector path (blue, red: now) and objects (green)", fontsize=9)
            frames.append(dict(_png(lambda b: fig.savefig(b, format="png")),
                               caption=f"tick {tick.tick} · {len(objects[k])} objects · {instruction}"))
    finally:
        plt.close(fig)
    return frames

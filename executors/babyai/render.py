"""BabyAI's state renderer for `architect episode … --tick T`: the true grid
(replayed from the episode's level, seed and the actions executed before tick
T) beside the agent's belief map (the first map-shaped output of the tick),
two characters per cell in minigrid's notation (object, colour; the agent as
an arrow; `__` an open door, `L` a locked one; blank = unknown)."""

from __future__ import annotations

import numpy as np
from minigrid.core.constants import IDX_TO_COLOR, IDX_TO_OBJECT

from executors.babyai import envs
from executors.babyai import world as W

_OBJECT_CHAR = {"wall": "W", "floor": "F", "door": "D", "key": "K", "ball": "A", "box": "B", "goal": "G",
                "lava": "V"}
_ARROWS = (">>", "VV", "<<", "^^")          # minigrid direction: east, south, west, north
_MAP_ARROWS = ("^^", ">>", "VV", "<<")      # map frame heading: start, right, back, left


def true_grid(episode: dict, actions: list) -> tuple[list[str], object]:
    """The real level after `actions` (slips replayed as in the simulator)."""
    env = envs.make_env(episode["level"])
    try:
        envs.reset_env(env, episode["seed"])
        u = env.unwrapped
        rng = envs.slip_rng(episode)
        for action in _flatten(actions):
            index = envs.slipped(W.action_index(action), rng, float(episode.get("slip") or 0.0))
            _, _, terminated, truncated, _ = env.step(u.actions(index))
            if terminated or truncated:
                break
        lines = u.pprint_grid().splitlines()
        carrying = f"carrying: {u.carrying.color} {u.carrying.type}" if u.carrying else "carrying: nothing"
        return lines, carrying
    finally:
        env.close()


def _flatten(actions: list) -> list:
    out = []
    for a in actions:
        if isinstance(a, (list, tuple)):
            out.extend(a)
        elif a is not None:
            out.append(a)
    return out


def belief_map(captured: dict) -> tuple[str | None, np.ndarray | None, dict | None]:
    """(node, map, pose) of the tick: the first map-shaped array output and the
    first pose-shaped output among the captured nodes."""
    node = grid = pose = None
    for name, fired in captured.items():
        for value in (fired.get("outputs") or {}).values():
            if grid is None and isinstance(value, np.ndarray) and value.shape == (W.MAP_SIZE, W.MAP_SIZE, 3):
                node, grid = name, value
            if pose is None and isinstance(value, dict) and {"x", "y", "dir"} <= set(value):
                pose = value
    return node, grid, pose


def _cell(code) -> str:
    obj, color, state = (int(c) for c in code)
    name = IDX_TO_OBJECT.get(obj, "unseen")
    if name == "unseen":
        return "  "
    if name == "empty":
        return " ."
    if name == "door" and state == W.OPEN:
        return "__"
    letter = "L" if name == "door" and state == W.LOCKED else _OBJECT_CHAR.get(name, "?")
    return letter + IDX_TO_COLOR.get(color, "?")[0].upper()


def render_map(grid: np.ndarray, pose: dict | None) -> list[str]:
    known = np.argwhere(grid[:, :, 0] != W.UNSEEN)
    if known.size == 0:
        return ["(nothing known yet)"]
    (x0, y0), (x1, y1) = known.min(axis=0), known.max(axis=0)
    if pose is not None:
        x0, y0 = min(x0, pose["x"]), min(y0, pose["y"])
        x1, y1 = max(x1, pose["x"]), max(y1, pose["y"])
    lines = []
    for y in range(y0, y1 + 1):
        row = []
        for x in range(x0, x1 + 1):
            if pose is not None and (x, y) == (pose["x"], pose["y"]):
                row.append(_MAP_ARROWS[int(pose["dir"]) % 4])
            else:
                row.append(_cell(grid[x, y]))
        lines.append("".join(row))
    return lines


def render_state(episode: dict, tick: int, captured: dict, actions: list) -> str:
    truth, carrying = true_grid(episode, actions)
    node, grid, pose = belief_map(captured)
    belief = render_map(grid, pose) if grid is not None else ["(no map-shaped output at this tick)"]
    left_title = f"true grid at tick {tick}, before its actions ({carrying})"
    right_title = f"belief map of node {node!r} (start frame, ^^ = start heading)" if node else "belief map"
    width = max(len(left_title), *(len(line) for line in truth)) + 4
    rows = [left_title.ljust(width) + right_title]
    for i in range(max(len(truth), len(belief))):
        left = truth[i] if i < len(truth) else ""
        right = belief[i] if i < len(belief) else ""
        rows.append(left.ljust(width) + right)
    return "\n".join(rows)

"""BabyAI's state renderer for `architect episode … --tick T`: the true grid
(replayed from the episode's level, seed and the actions executed before tick
T) beside the agent's belief map (the first map-shaped output of the tick),
two characters per cell: the object's letter and its colour's code (every
colour its own letter: grey is `E`, green `G`), the agent as an arrow, `__`
an open door, `L` a locked one, ` .` an empty cell, blank = unknown. A
legend under the two grids names every letter and colour code shown."""

from __future__ import annotations

import numpy as np
from minigrid.core.constants import IDX_TO_COLOR, IDX_TO_OBJECT

from executors.babyai import envs
from executors.babyai import world as W

_OBJECT_CHAR = {"wall": "W", "floor": "F", "door": "D", "key": "K", "ball": "A", "box": "B", "goal": "G",
                "lava": "V"}
_COLOUR_CODE = {"red": "R", "green": "G", "blue": "B", "purple": "P", "yellow": "Y", "grey": "E"}
_ARROWS = (">>", "VV", "<<", "^^")          # minigrid direction: east, south, west, north
_MAP_ARROWS = ("^^", ">>", "VV", "<<")      # map frame heading: start, right, back, left


def true_grid(episode: dict, actions: list) -> tuple[np.ndarray, tuple[int, int, int], str]:
    """The real level after `actions` (slips replayed as in the simulator): its
    encoded grid [x, y], the agent's (x, y, direction) and what it carries."""
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
        carrying = f"carrying: {u.carrying.color} {u.carrying.type}" if u.carrying else "carrying: nothing"
        return u.grid.encode(), (int(u.agent_pos[0]), int(u.agent_pos[1]), int(u.agent_dir)), carrying
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
    return letter + _COLOUR_CODE.get(IDX_TO_COLOR.get(color, "?"), "?")


def _rows(grid: np.ndarray, x_range: range, y_range: range, agent: tuple[int, int, str] | None) -> list[str]:
    return ["".join(agent[2] if agent and (x, y) == agent[:2] else _cell(grid[x, y]) for x in x_range)
            for y in y_range]


def render_true(grid: np.ndarray, agent: tuple[int, int, int]) -> list[str]:
    x, y, direction = agent
    return _rows(grid, range(grid.shape[0]), range(grid.shape[1]), (x, y, _ARROWS[direction % 4]))


def render_map(grid: np.ndarray, pose: dict | None) -> list[str]:
    known = np.argwhere(grid[:, :, 0] != W.UNSEEN)
    if known.size == 0:
        return ["(nothing known yet)"]
    (x0, y0), (x1, y1) = known.min(axis=0), known.max(axis=0)
    agent = None
    if pose is not None:
        x0, y0 = min(x0, pose["x"]), min(y0, pose["y"])
        x1, y1 = max(x1, pose["x"]), max(y1, pose["y"])
        agent = (pose["x"], pose["y"], _MAP_ARROWS[int(pose["dir"]) % 4])
    return _rows(grid, range(x0, x1 + 1), range(y0, y1 + 1), agent)


def legend(*grids: np.ndarray) -> str:
    """The letters and colour codes the grids use, each named."""
    shown = np.concatenate([g.reshape(-1, 3) for g in grids])
    objects = sorted({IDX_TO_OBJECT.get(int(o)) for o in np.unique(shown[:, 0])} & set(_OBJECT_CHAR))
    colours = sorted({IDX_TO_COLOR.get(int(c)) for o, c, _ in shown
                      if IDX_TO_OBJECT.get(int(o)) in _OBJECT_CHAR} & set(_COLOUR_CODE))
    parts = [f"{_OBJECT_CHAR[name]} {name}" for name in objects]
    parts += ["L locked door", "__ open door", " . empty", "arrows: the agent"]
    return ("legend: " + ", ".join(parts) + "; colours: "
            + ", ".join(f"{_COLOUR_CODE[c]} {c}" for c in colours or _COLOUR_CODE))


def render_state(episode: dict, tick: int, captured: dict, actions: list) -> str:
    grid_true, agent, carrying = true_grid(episode, actions)
    truth = render_true(grid_true, agent)
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
    rows.append(legend(grid_true, *([grid] if grid is not None else [])))
    return "\n".join(rows)

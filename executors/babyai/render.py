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
    return list(true_grids(episode, [actions]))[-1]


def true_grids(episode: dict, batches: list[list]):
    """The real level before each batch of actions and after the last one (as `true_grid`)."""
    env = envs.make_env(episode["level"])
    try:
        envs.reset_env(env, episode["seed"])
        u = env.unwrapped
        rng = envs.slip_rng(episode)
        ended = False

        def now():
            carrying = f"carrying: {u.carrying.color} {u.carrying.type}" if u.carrying else "carrying: nothing"
            return u.grid.encode(), (int(u.agent_pos[0]), int(u.agent_pos[1]), int(u.agent_dir)), carrying

        for batch in batches:
            yield now()
            for action in _flatten(batch):
                if ended:
                    break
                index = envs.slipped(W.action_index(action), rng, float(episode.get("slip") or 0.0))
                _, _, terminated, truncated, _ = env.step(u.actions(index))
                ended = terminated or truncated
        yield now()
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


# --- the episode viewer's pictures (harness/report): the same two grids, drawn as SVG ---------------

_CELL = 14
_RGB = {"red": "#e53935", "green": "#43a047", "blue": "#1e66f5", "purple": "#8e44ad", "yellow": "#f4c20d",
        "grey": "#7f7f7f"}
_HEADINGS = {">>": 0, "VV": 90, "<<": 180, "^^": 270}  # arrow -> rotation of a right-pointing triangle


def _svg_cell(code, x: int, y: int) -> str:
    obj, color, state = (int(c) for c in code)
    name = IDX_TO_OBJECT.get(obj, "unseen")
    fill = _RGB.get(IDX_TO_COLOR.get(color, "grey"), "#7f7f7f")
    px, py, c = x * _CELL, y * _CELL, _CELL
    if name in ("unseen", "empty", "wall"):
        return ""  # drawn by _svg_grid
    if name == "door":
        door = "none" if state == W.OPEN else fill
        bar = (f'<line x1="{px + 3}" y1="{py + c / 2}" x2="{px + c - 3}" y2="{py + c / 2}" stroke="#fff" '
               'stroke-width="2"/>') if state == W.LOCKED else ""
        return (f'<rect x="{px + 1}" y="{py + 1}" width="{c - 2}" height="{c - 2}" fill="{door}" '
                f'stroke="{fill}" stroke-width="2"/>' + bar)
    if name == "ball":
        return f'<circle cx="{px + c / 2}" cy="{py + c / 2}" r="{c * 0.35}" fill="{fill}"/>'
    if name == "box":
        return (f'<rect x="{px + 2}" y="{py + 2}" width="{c - 4}" height="{c - 4}" fill="none" '
                f'stroke="{fill}" stroke-width="2.5"/>')
    if name == "key":
        return (f'<circle cx="{px + c * 0.35}" cy="{py + c / 2}" r="{c * 0.2}" fill="{fill}"/>'
                f'<rect x="{px + c * 0.45}" y="{py + c * 0.42}" width="{c * 0.45}" height="{c * 0.16}" fill="{fill}"/>')
    if name in ("goal", "lava", "floor"):
        return f'<rect x="{px}" y="{py}" width="{c}" height="{c}" fill="{fill}" opacity="0.6"/>'
    return ""


def _svg_grid(grid: np.ndarray, cells: list[tuple[int, int]], origin: tuple[int, int], size: tuple[int, int],
              agent: tuple[int, int, str] | None, dx: int, title: str) -> str:
    """Cells of `grid` drawn from `origin`; empty cells show as light grey, unknown ones as white."""
    x0, y0 = origin
    known = len(cells) == size[0] * size[1]  # every cell known (the true grid): empty is the background
    parts = [f'<g transform="translate({dx},18)"><text x="0" y="-6" font-size="11">{_escape(title)}</text>'
             f'<rect width="{size[0] * _CELL}" height="{size[1] * _CELL}" fill="{"#eee" if known else "#fff"}" '
             'stroke="#ccc"/>']
    plain = ((W.WALL, "#555"),) if known else ((W.EMPTY, "#eee"), (W.WALL, "#555"))
    for kind, fill in plain:  # the many plain squares as one path each
        squares = "".join(f"M{(x - x0) * _CELL} {(y - y0) * _CELL}h{_CELL}v{_CELL}h-{_CELL}z"
                          for x, y in cells if int(grid[x, y][0]) == kind)
        parts.append(f'<path d="{squares}" fill="{fill}"/>' if squares else "")
    parts += [_svg_cell(grid[x, y], x - x0, y - y0) for x, y in cells]
    if agent is not None:
        ax, ay, arrow = agent
        cx, cy = (ax - x0 + 0.5) * _CELL, (ay - y0 + 0.5) * _CELL
        parts.append(f'<polygon points="{cx + 5},{cy} {cx - 4},{cy - 4} {cx - 4},{cy + 4}" fill="#d62728" '
                     f'transform="rotate({_HEADINGS[arrow]} {cx} {cy})"/>')
    parts.append("</g>")
    return "".join(parts)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def state_svg(tick: int, grid_true: np.ndarray, agent: tuple[int, int, int], carrying: str,
              node: str | None, belief: np.ndarray | None, pose: dict | None) -> str:
    """The true grid (agent as a red triangle) beside the belief map (the part known so far)."""
    w, h = grid_true.shape[:2]
    left = _svg_grid(grid_true, [(x, y) for x in range(w) for y in range(h)], (0, 0), (w, h),
                     (agent[0], agent[1], _ARROWS[agent[2] % 4]), 0, f"true grid, tick {tick} ({carrying})")
    width, height = w * _CELL, h * _CELL
    dx = width + 30
    if belief is None:
        right = f'<text x="{dx}" y="30" font-size="11">no map-shaped output at this tick</text>'
        bw = bh = 0
    else:
        known = np.argwhere(belief[:, :, 0] != W.UNSEEN)
        points = [tuple(p) for p in known] + ([(pose["x"], pose["y"])] if pose else [])
        if points:
            (x0, y0), (x1, y1) = np.min(points, axis=0), np.max(points, axis=0)
        else:
            x0 = y0 = x1 = y1 = W.MAP_RADIUS
        marker = (pose["x"], pose["y"], _MAP_ARROWS[int(pose["dir"]) % 4]) if pose else None
        right = _svg_grid(belief, [tuple(p) for p in known], (int(x0), int(y0)), (x1 - x0 + 1, y1 - y0 + 1),
                          marker, dx, f"belief map of {node} (start frame, start heading up)")
        bw, bh = (x1 - x0 + 1) * _CELL, (y1 - y0 + 1) * _CELL
    total_w, total_h = dx + max(bw, 300), max(height, bh) + 24
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{total_h}" '
            f'viewBox="0 0 {total_w} {total_h}" font-family="sans-serif">{left}{right}</svg>')


def render_episode(data) -> list[dict]:
    """One picture per tick of a logged episode (`harness.report.episode_data.EpisodeData`):
    the true grid replayed from the level, seed and the logged actions, beside the
    belief map the tick's nodes output (a map-shaped array logged in full)."""
    frames = []
    truths = true_grids(data.episode, [t.actions for t in data.ticks])
    for tick, (grid_true, agent, carrying) in zip(data.ticks, truths):
        captured = {f.node: {"outputs": f.values["outputs"]} for f in tick.firings}
        node, belief, pose = belief_map(captured)
        frames.append({"svg": state_svg(tick.tick, grid_true, agent, carrying, node, belief, pose),
                       "caption": f"{carrying}; mission: {data.episode.get('level')} seed {data.episode.get('seed')}"})
    return frames

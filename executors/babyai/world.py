"""The agent's own model of a BabyAI world: view geometry, an allocentric map in
the agent's start frame, and shortest-path planning on what is known.

Frames. The egocentric view is minigrid's 7x7 image: `image[i, j]`, agent at
(3, 6) looking towards j = 0. The map frame is the agent's *start* frame: a
square array centred on the start cell, heading 0 = the start heading ("north",
-y), 1 = east, 2 = south, 3 = west (turning right adds 1). Nothing here reads
the simulator's true pose or grid.
"""

from __future__ import annotations

import heapq
from collections import deque

from harness.lazy import lazy_import

np = lazy_import("numpy")  # node declarations load without numpy

# minigrid's cell encoding (minigrid.core.constants), written out so that the
# node declarations load without importing minigrid and gymnasium (a test
# checks them against minigrid's own tables).
COLOR_TO_IDX = {"red": 0, "green": 1, "blue": 2, "purple": 3, "yellow": 4, "grey": 5}
IDX_TO_COLOR = {v: k for k, v in COLOR_TO_IDX.items()}
OBJECT_TO_IDX = {"unseen": 0, "empty": 1, "wall": 2, "floor": 3, "door": 4, "key": 5, "ball": 6, "box": 7,
                 "goal": 8, "lava": 9, "agent": 10}
IDX_TO_OBJECT = {v: k for k, v in OBJECT_TO_IDX.items()}
STATE_TO_IDX = {"open": 0, "closed": 1, "locked": 2}

ACTIONS = ("left", "right", "forward", "pickup", "drop", "toggle", "done")
ACTION_INDEX = {name: i for i, name in enumerate(ACTIONS)}
IDX_TO_STATE = {v: k for k, v in STATE_TO_IDX.items()}

UNSEEN, EMPTY, WALL, FLOOR, DOOR, KEY, BALL, BOX, GOAL, LAVA = (
    OBJECT_TO_IDX[n] for n in ("unseen", "empty", "wall", "floor", "door", "key", "ball", "box", "goal", "lava"))
OPEN, CLOSED, LOCKED = STATE_TO_IDX["open"], STATE_TO_IDX["closed"], STATE_TO_IDX["locked"]
PORTABLE = {KEY, BALL, BOX}

VIEW = 7
AGENT_VIEW_CELL = (3, 6)
MAP_RADIUS = 26  # BabyAI grids are at most 22 cells wide: the start frame fits either way
MAP_SIZE = 2 * MAP_RADIUS + 1
DIRS = ((0, -1), (1, 0), (0, 1), (-1, 0))


def action_index(action) -> int:
    """An action name or int -> the minigrid action index."""
    if isinstance(action, str):
        if action not in ACTION_INDEX:
            raise ValueError(f"unknown action {action!r}; expected one of {ACTIONS}")
        return ACTION_INDEX[action]
    index = int(action)
    if not 0 <= index < len(ACTIONS):
        raise ValueError(f"action index {index} out of range 0..{len(ACTIONS) - 1}")
    return index


def start_pose() -> dict:
    return {"x": MAP_RADIUS, "y": MAP_RADIUS, "dir": 0}


def ego_to_map(pose: dict, fwd: int, right: int) -> tuple[int, int]:
    fx, fy = DIRS[pose["dir"]]
    rx, ry = DIRS[(pose["dir"] + 1) % 4]
    return pose["x"] + fwd * fx + right * rx, pose["y"] + fwd * fy + right * ry


def front_of(x: int, y: int, d: int) -> tuple[int, int]:
    return x + DIRS[d][0], y + DIRS[d][1]


def cell_dict(code) -> dict | None:
    """(type, colour, state) indices -> readable dict (None for unseen)."""
    obj = int(code[0])
    if obj == UNSEEN:
        return None
    out = {"type": IDX_TO_OBJECT[obj], "color": IDX_TO_COLOR.get(int(code[1]))}
    if obj == DOOR:
        out["state"] = IDX_TO_STATE[int(code[2])]
    return out


def object_code(obj: dict | None) -> tuple[int, int, int]:
    if obj is None:
        return (UNSEEN, 0, 0)
    state = STATE_TO_IDX.get(obj.get("state") or "open", 0) if obj["type"] == "door" else 0
    return (OBJECT_TO_IDX[obj["type"]], COLOR_TO_IDX.get(obj.get("color") or "red", 0), state)


def new_map() -> np.ndarray:
    """An empty map: uint8[MAP_SIZE, MAP_SIZE, 3] indexed [x, y], all unseen."""
    return np.zeros((MAP_SIZE, MAP_SIZE, 3), dtype=np.uint8)


def write_cells(grid: np.ndarray, cells: list[dict], pose: dict) -> None:
    """Write egocentric cells (perception output) into the map at `pose`."""
    for cell in cells:
        x, y = ego_to_map(pose, cell["fwd"], cell["right"])
        if 0 <= x < MAP_SIZE and 0 <= y < MAP_SIZE:
            grid[x, y] = cell["code"]
    # the agent's own cell is not in view (the image shows what it carries there):
    # it is walkable floor, or a door it stands in, which must therefore be open
    if int(grid[pose["x"], pose["y"], 0]) == DOOR:
        grid[pose["x"], pose["y"], 2] = OPEN
    else:
        grid[pose["x"], pose["y"]] = (EMPTY, 0, 0)


# -- object descriptions ------------------------------------------------------

def matches(code, desc: dict) -> bool:
    """Does a map cell match an object description {type, color, loc}?"""
    obj = int(code[0])
    if obj not in PORTABLE and obj != DOOR:
        return False
    if desc.get("type") and OBJECT_TO_IDX[desc["type"]] != obj:
        return False
    if desc.get("color") and COLOR_TO_IDX[desc["color"]] != int(code[1]):
        return False
    return True


def loc_ok(x: int, y: int, loc: str | None) -> bool:
    """'on your left' etc. refer to the agent's start pose: the map frame."""
    if not loc:
        return True
    dx, dy = x - MAP_RADIUS, y - MAP_RADIUS
    return {"front": dy < 0, "behind": dy > 0, "left": dx < 0, "right": dx > 0}[loc]


def find_objects(grid: np.ndarray, desc: dict) -> list[tuple[int, int]]:
    xs, ys = np.nonzero(grid[:, :, 0] != UNSEEN)
    room = start_room(grid) if desc.get("loc") else None
    out = []
    for x, y in zip(xs.tolist(), ys.tolist()):
        if matches(grid[x, y], desc) and loc_ok(x, y, desc.get("loc")) and (room is None or (x, y) in room):
            out.append((x, y))
    return out


def start_room(grid: np.ndarray) -> set:
    """Known cells of the room the agent started in (BabyAI locations such as
    'in front of you' only name objects there), with its walls and doors."""
    start = (MAP_RADIUS, MAP_RADIUS)
    inside, queue, border = {start}, deque([start]), set()
    while queue:
        x, y = queue.popleft()
        for dx, dy in DIRS:
            nxt = (x + dx, y + dy)
            if nxt in inside or nxt in border or not (0 <= nxt[0] < MAP_SIZE and 0 <= nxt[1] < MAP_SIZE):
                continue
            obj = int(grid[nxt][0])
            if obj in (WALL, DOOR):
                border.add(nxt)
            elif obj != UNSEEN:
                inside.add(nxt)
                queue.append(nxt)
    return inside | border


# -- planning -------------------------------------------------------------------

def passable_cost(code, carrying: tuple | None) -> int | None:
    """Extra actions needed to enter a known cell, or None if it cannot be entered."""
    obj = int(code[0])
    if obj in (EMPTY, FLOOR, GOAL):
        return 0
    if obj == DOOR:
        state = int(code[2])
        if state == OPEN:
            return 0
        if state == CLOSED:
            return 1
        if carrying is not None and carrying[0] == KEY and carrying[1] == int(code[1]):
            return 1
    return None


def plan(grid: np.ndarray, pose: dict, goal, carrying: tuple | None = None, max_cost: int = 10_000):
    """Cheapest action sequence (left/right/forward/toggle) over known cells from
    `pose` to a state where `goal(x, y, d)` holds. Returns a list of action names
    or None when no known path reaches a goal state."""
    start = (pose["x"], pose["y"], pose["dir"])
    if goal(*start):
        return []
    codes = grid  # indexed [x, y]
    frontier = [(0, 0, start)]
    parent = {start: None}
    best = {start: 0}
    counter = 0
    while frontier:
        cost, _, state = heapq.heappop(frontier)
        if cost > best.get(state, 1 << 30) or cost > max_cost:
            continue
        x, y, d = state
        if goal(x, y, d) and state != start:
            return _unwind(parent, state)
        moves = [((x, y, (d - 1) % 4), 1, ("left",)), ((x, y, (d + 1) % 4), 1, ("right",))]
        nx, ny = x + DIRS[d][0], y + DIRS[d][1]
        if 0 <= nx < MAP_SIZE and 0 <= ny < MAP_SIZE:
            extra = passable_cost(codes[nx, ny], carrying)
            if extra is not None:
                moves.append(((nx, ny, d), 1 + extra, ("toggle", "forward") if extra else ("forward",)))
        for nxt, step_cost, acts in moves:
            new_cost = cost + step_cost
            if new_cost < best.get(nxt, 1 << 30):
                best[nxt] = new_cost
                parent[nxt] = (state, acts)
                counter += 1
                heapq.heappush(frontier, (new_cost, counter, nxt))
    return None


def _unwind(parent: dict, state) -> list[str]:
    out: list[str] = []
    while parent[state] is not None:
        state, acts = parent[state]
        out[:0] = acts
    return out


def facing_any(targets) -> callable:
    target_set = set(targets)
    return lambda x, y, d: (x + DIRS[d][0], y + DIRS[d][1]) in target_set


def bfs_distance(passable, start: tuple[int, int], goal_cells: set):
    """(moves, goal cell reached) from start to the nearest goal cell, 4-neighbour
    moves without turns; passable(x, y) -> bool. None if unreachable."""
    if start in goal_cells:
        return 0, start
    seen = {start}
    queue = deque([(start, 0)])
    while queue:
        (x, y), dist = queue.popleft()
        for dx, dy in DIRS:
            nxt = (x + dx, y + dy)
            if nxt in seen:
                continue
            if nxt in goal_cells:
                return dist + 1, nxt
            if passable(*nxt):
                seen.add(nxt)
                queue.append((nxt, dist + 1))
    return None

"""Exploration: where to go when the subgoal's target is not on the map.

All alternatives take the same inputs (a request flag, map, pose, carrying)
and emit an `ActionChunk`.
"""

from __future__ import annotations

from harness.lazy import lazy_import

np = lazy_import("numpy")  # node declarations load without numpy

from executors.babyai import world as W
from executors.babyai.policy import SubgoalPolicy
from harness.canvas.registry import Node, node_type

PORTS = dict(
    inputs={"request": {"type": "Bool", "doc": "fires only when the executor asks to explore"},
            "map": "Map", "pose": "Pose", "carrying": "Carrying"},
    outputs={"chunk": "ActionChunk"},
)


def _front_code(grid, x, y, d):
    fx, fy = W.front_of(x, y, d)
    return grid[fx, fy]


@node_type("babyai.FrontierExplore", **PORTS, role="exploration",
           config_schema={"type": "object", "properties": {
               "max_actions": {"type": ["integer", "null"], "minimum": 1, "default": None,
                               "description": "truncate the path to the frontier"},
               "fetch_keys": {"type": "boolean", "default": True,
                              "description": "when no frontier is reachable, fetch a known key for a known locked door"},
               "clear_blockers": {"type": "boolean", "default": True,
                                  "description": "when no frontier is reachable, pick up an object blocking the way"}},
               "additionalProperties": False},
           doc="Shortest known path to face the nearest unseen cell (opening doors on the way).")
class FrontierExplore(Node):
    """Plans the shortest path over known cells to face the nearest unseen cell, opening
    closed doors on the way. When no unseen cell is reachable: with `fetch_keys`, plans to
    pick up a known key whose colour matches a known locked door (or, carrying it, to face
    the door and toggle); then, with `clear_blockers` and empty hands, plans as if portable
    objects were absent and picks up the first one on that path. When nothing of this
    yields a path, the chunk is a single `left` turn. `max_actions` truncates the chunk."""

    def step(self, inputs, ctx):
        grid, pose = inputs["map"], inputs["pose"]
        carrying = W.object_code(inputs["carrying"])[:2] if inputs["carrying"] else None

        def unseen(x, y, d):
            return int(_front_code(grid, x, y, d)[0]) == W.UNSEEN

        path = W.plan(grid, pose, unseen, carrying)
        if not path and self.config["fetch_keys"]:
            path = self._fetch_key(grid, pose, carrying)
        if not path and self.config["clear_blockers"] and not carrying:
            path = self._clear_blocker(grid, pose, unseen)
        if not path:
            path = ["left"]
        if self.config["max_actions"]:
            path = path[: self.config["max_actions"]]
        return {"chunk": path}

    @staticmethod
    def _clear_blocker(grid, pose, goal):
        """Plan as if portable objects were not there; pick up the first one on that path."""
        relaxed = grid.copy()
        portable = np.isin(relaxed[:, :, 0], list(W.PORTABLE))
        relaxed[portable] = (W.EMPTY, 0, 0)
        path = W.plan(relaxed, pose, goal, None)
        if not path:
            return None
        x, y, d = pose["x"], pose["y"], pose["dir"]
        for k, action in enumerate(path):
            if action == "forward":
                fx, fy = W.front_of(x, y, d)
                if portable[fx, fy]:
                    return path[:k] + ["pickup"]
                x, y = fx, fy
            elif action in ("left", "right"):
                d = (d + (1 if action == "right" else -1)) % 4
        return None

    def _fetch_key(self, grid, pose, carrying):
        xs, ys = (grid[:, :, 0] == W.DOOR).nonzero()
        for x, y in zip(xs.tolist(), ys.tolist()):
            if int(grid[x, y, 2]) != W.LOCKED:
                continue
            color = W.IDX_TO_COLOR[int(grid[x, y, 1])]
            if carrying and carrying == (W.KEY, int(grid[x, y, 1])):
                path = W.plan(grid, pose, W.facing_any([(x, y)]), carrying)
                if path is not None:
                    return path + ["toggle"]
                continue
            actions, _ = SubgoalPolicy().solve(f"pick up the {color} key", grid, pose, carrying)
            if actions:
                return actions
        return None


@node_type("babyai.RandomWalkExplore", **PORTS, role="exploration",
           config_schema={"type": "object", "properties": {
               "length": {"type": "integer", "minimum": 1, "default": 4, "description": "actions per chunk"},
               "forward_prob": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.6}},
               "additionalProperties": False},
           doc="Random turns and forward moves (seeded per episode); opens a closed door in front.")
class RandomWalkExplore(Node):
    """Emits `length` actions: a closed door in front is toggled open; otherwise
    `forward` with probability `forward_prob` when the cell in front is passable on the
    known map, else a random `left` or `right`. Draws come from the episode-seeded rng, so
    an episode repeats exactly."""

    def step(self, inputs, ctx):
        grid, pose = inputs["map"], inputs["pose"]
        x, y, d = pose["x"], pose["y"], pose["dir"]
        chunk = []
        for _ in range(self.config["length"]):
            front = _front_code(grid, x, y, d)
            if int(front[0]) == W.DOOR and int(front[2]) == W.CLOSED:
                chunk.append("toggle")
                grid = grid.copy()
                fx, fy = W.front_of(x, y, d)
                grid[fx, fy, 2] = W.OPEN
                continue
            if ctx.rng.random() < self.config["forward_prob"] and W.passable_cost(front, None) == 0:
                chunk.append("forward")
                x, y = W.front_of(x, y, d)
            else:
                turn = "left" if ctx.rng.random() < 0.5 else "right"
                chunk.append(turn)
                d = (d - 1) % 4 if turn == "left" else (d + 1) % 4
        return {"chunk": chunk}


@node_type("babyai.WallFollowExplore", **PORTS, role="exploration",
           config_schema={"type": "object", "properties": {
               "length": {"type": "integer", "minimum": 1, "default": 8, "description": "actions per chunk"},
               "hand": {"enum": ["right", "left"], "default": "right"}},
               "additionalProperties": False},
           doc="Keeps a wall on one hand (right-hand rule on known cells); opens closed doors it faces.")
class WallFollowExplore(Node):
    """Right-hand (or `hand: left`) rule on the known map: turns towards the hand side
    when that cell is enterable (never twice in a row), else goes forward when the cell in
    front is enterable (toggling a closed door first), else turns away from the hand.
    Unseen cells count as enterable. Emits `length` actions; it never stops by itself."""

    def step(self, inputs, ctx):
        grid, pose = inputs["map"], inputs["pose"]
        x, y, d = pose["x"], pose["y"], pose["dir"]
        side = 1 if self.config["hand"] == "right" else -1
        turn_to, turn_away = ("right", "left") if side == 1 else ("left", "right")
        chunk: list[str] = []
        opened: set = set()
        while len(chunk) < self.config["length"]:
            hand_dir = (d + side) % 4
            hand = _front_code(grid, x, y, hand_dir)
            front = _front_code(grid, x, y, d)
            if self._enterable(hand, W.front_of(x, y, hand_dir), opened) and chunk[-1:] != [turn_to]:
                chunk.append(turn_to)
                d = hand_dir
            elif self._enterable(front, W.front_of(x, y, d), opened):
                if int(front[0]) == W.DOOR and int(front[2]) != W.OPEN and W.front_of(x, y, d) not in opened:
                    chunk.append("toggle")
                    opened.add(W.front_of(x, y, d))
                chunk.append("forward")
                x, y = W.front_of(x, y, d)
            else:
                chunk.append(turn_away)
                d = (d - side) % 4
        return {"chunk": chunk[: self.config["length"]]}

    @staticmethod
    def _enterable(code, pos, opened) -> bool:
        if pos in opened:
            return True
        cost = W.passable_cost(code, None)
        return cost is not None

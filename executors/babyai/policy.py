"""The low-level text-subgoal policy, in openpi's request/response shape.

Request:  {"prompt": subgoal text,
           "observation/image": uint8[7, 7, 3]   (egocentric view),
           "observation/map":   uint8[S, S, 3]   (the agent's map, start frame),
           "observation/state": float32[5]       (x, y, heading in the map; carried type, colour; type 0 = nothing)}
Response: {"actions": int64[k] (minigrid action indices), "status": "complete" | "partial" | "explore"}

"complete": executing every action achieves the subgoal with the last one;
"partial": a preparatory chunk (drop what is carried, fetch a key); "explore":
the target is not on the map (or not reachable over known cells): no actions.
A `WebsocketClientPolicy` serving this shape can replace `SubgoalPolicy`.
"""

from __future__ import annotations

from harness.lazy import lazy_import

np = lazy_import("numpy")  # node declarations load without numpy

from executors.babyai import world as W
from executors.babyai.mission import parse_subgoal

STATE_DIM = 5


def make_request(prompt: str, image, grid, pose: dict, carrying: dict | None) -> dict:
    code = W.object_code(carrying) if carrying else (0, 0, 0)
    state = np.array([pose["x"], pose["y"], pose["dir"], code[0], code[1]], dtype=np.float32)
    return {"prompt": prompt, "observation/image": np.asarray(image, dtype=np.uint8),
            "observation/map": np.asarray(grid, dtype=np.uint8), "observation/state": state}


def _response(actions: list[str], status: str) -> dict:
    return {"actions": np.array([W.ACTION_INDEX[a] for a in actions], dtype=np.int64), "status": status}


class SubgoalPolicy:
    """Shortest known path to the subgoal's object, then the interaction."""

    def __init__(self, max_actions: int | None = None):
        self.max_actions = max_actions

    def get_server_metadata(self) -> dict:
        return {"policy": "babyai.SubgoalPolicy", "actions": list(W.ACTIONS), "state_dim": STATE_DIM}

    def reset(self) -> None:
        pass

    def infer(self, obs: dict) -> dict:
        grid = obs["observation/map"]
        state = [int(v) for v in np.asarray(obs["observation/state"]).tolist()]
        pose = {"x": state[0], "y": state[1], "dir": state[2]}
        carrying = (state[3], state[4]) if state[3] else None
        actions, status = self.solve(obs["prompt"], grid, pose, carrying)
        if self.max_actions and len(actions) > self.max_actions:
            actions, status = actions[: self.max_actions], "partial"
        return _response(actions, status)

    def solve(self, subgoal: str, grid, pose: dict, carrying: tuple | None) -> tuple[list[str], str]:
        """(action names, status) for a subgoal; `carrying` is (type, colour) indices or None."""
        return self._solve(parse_subgoal(subgoal), grid, pose, carrying)

    def _solve(self, goal: dict, grid, pose, carrying):
        verb, obj = goal["verb"], goal["obj"]
        if verb == "goto":
            targets = W.find_objects(grid, obj)
            path = W.plan(grid, pose, W.facing_any(targets), carrying) if targets else None
            if path is None:
                return [], "explore"
            # already facing it: turn away and back so the arrival is an action the verifier sees
            return (path or ["left", "right"]), "complete"
        if verb == "pickup":
            if carrying and W.matches((carrying[0], carrying[1], 0), obj):
                # already holding it: only a new pickup counts, so put it down first
                drop = self._drop_here(grid, pose, carrying)
                return (drop + ["pickup"], "complete") if drop else self._make_hands_free(grid, pose, carrying)
            return self._pickup(obj, grid, pose, carrying, completes=True)
        if verb == "open":
            return self._open(obj, grid, pose, carrying)
        if verb == "put":
            if carrying and W.matches((carrying[0], carrying[1], 0), obj):
                return self._put_next_to(goal["target"], grid, pose, carrying)
            return self._pickup(obj, grid, pose, carrying, completes=False)
        return [], "explore"

    def _drop_here(self, grid, pose, carrying) -> list[str]:
        fx, fy = W.front_of(pose["x"], pose["y"], pose["dir"])
        return ["drop"] if int(grid[fx, fy, 0]) == W.EMPTY else []

    def _make_hands_free(self, grid, pose, carrying):
        def empty_front(x, y, d):
            fx, fy = W.front_of(x, y, d)
            return int(grid[fx, fy, 0]) == W.EMPTY and (fx, fy) != (pose["x"], pose["y"])
        path = W.plan(grid, pose, empty_front, carrying)
        return (path + ["drop"], "partial") if path is not None else ([], "explore")

    def _pickup(self, obj, grid, pose, carrying, completes: bool):
        targets = W.find_objects(grid, obj)
        path = W.plan(grid, pose, W.facing_any(targets), carrying) if targets else None
        if path is None:
            return [], "explore"  # keep what is carried (it may be the key on the way)
        if carrying:
            return self._make_hands_free(grid, pose, carrying)
        return path + ["pickup"], ("complete" if completes else "partial")

    def _open(self, obj, grid, pose, carrying):
        doors = [p for p in W.find_objects(grid, {**obj, "type": "door"})]
        if not doors:
            return [], "explore"
        can_open = [p for p in doors if int(grid[p][2]) != W.LOCKED
                    or (carrying and carrying[0] == W.KEY and carrying[1] == int(grid[p][1]))]
        path = W.plan(grid, pose, W.facing_any(can_open), carrying) if can_open else None
        if path is not None:
            x, y, d = pose["x"], pose["y"], pose["dir"]
            for a in path:
                x, y, d = _advance(x, y, d, a)
            door = grid[W.front_of(x, y, d)]
            return path + (["toggle", "toggle"] if int(door[2]) == W.OPEN else ["toggle"]), "complete"
        for door in doors:  # locked and no key in hand: fetch the matching key
            key = {"type": "key", "color": W.IDX_TO_COLOR[int(grid[door][1])], "loc": None}
            if W.find_objects(grid, key):
                return self._pickup(key, grid, pose, carrying, completes=False)
        return [], "explore"

    def _put_next_to(self, target, grid, pose, carrying):
        anchors = set(W.find_objects(grid, target))
        if not anchors:
            return [], "explore"

        def drop_spot(x, y, d):
            fx, fy = W.front_of(x, y, d)
            if int(grid[fx, fy, 0]) != W.EMPTY or (fx, fy) == (pose["x"], pose["y"]):
                return False
            return any((fx + dx, fy + dy) in anchors for dx, dy in W.DIRS)
        path = W.plan(grid, pose, drop_spot, carrying)
        if path is None:
            return [], "explore"
        return path + ["drop"], "complete"


def _advance(x, y, d, action):
    if action == "left":
        return x, y, (d - 1) % 4
    if action == "right":
        return x, y, (d + 1) % 4
    if action == "forward":
        fx, fy = W.front_of(x, y, d)
        return fx, fy, d
    return x, y, d


def decode_actions(response: dict) -> list[str]:
    """openpi-style `actions` (ints, names, or an [k, 1] array) -> action names."""
    raw = response.get("actions")
    if raw is None:
        return []
    values = np.asarray(raw).reshape(-1).tolist() if not isinstance(raw, list) else raw
    return [W.ACTIONS[W.action_index(v)] for v in values]


def connect_policy(config: dict):
    """The policy a SubgoalExecutor node calls: local, or a real openpi websocket client."""
    if config.get("backend", "local") == "websocket":
        from openpi_client.websocket_client_policy import WebsocketClientPolicy
        return WebsocketClientPolicy(host=config.get("host", "127.0.0.1"), port=config.get("port"))
    return SubgoalPolicy(max_actions=config.get("max_actions"))

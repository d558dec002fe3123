"""`eqa.ValueMap` and `eqa.FrontierPlanner`: ExploreEQA's semantic value map and its
value-weighted frontier sampling, on the navigation graph instead of a TSDF grid.

Seen places are the viewpoints that appeared as navigable neighbours of a visited
one (their positions come with the panorama); frontiers are the seen places not
yet visited. The "explored" area is the discs of `explored_radius_m` around the
visited viewpoints (what their panoramas saw), standing in for ExploreEQA's
explored voxels."""

from __future__ import annotations

import math

import numpy as np

from executors.mp3d.own_graph import shortest_route
from harness.canvas.registry import Node, node_type

RAY_STEP_M = 0.5


def flat(position) -> np.ndarray:
    return np.asarray(position[:2], dtype=float)


@node_type(
    "eqa.ValueMap",
    inputs={"state": "NavState", "panorama": "Panorama", "points": "List[PromptPoint]",
            "explore": {"type": "ExploreScores", "required": False, "doc": "the exploration scorer's output"}},
    outputs={"map": {"type": "ValueMap", "doc": "{current, trajectory, positions: {viewpoint: [x, y, z]}, edges: "
                                                "{visited viewpoint: [neighbours]}, values: {viewpoint: value}, "
                                                "moves}"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "use_lsv": {"type": "boolean", "default": True, "description": "weigh points by the local (direction) scores"},
        "use_gsv": {"type": "boolean", "default": True, "description": "scale by the global 'worth exploring' score"},
        "gsv_T": {"type": "number", "exclusiveMinimum": 0, "default": 0.5, "description": "global score temperature"},
        "gsv_F": {"type": "number", "exclusiveMinimum": 0, "default": 3.0, "description": "global score divisor"},
        "radius_m": {"type": "number", "minimum": 0, "maximum": 5, "default": 1.0,
                     "description": "a point's value is written to the seen places within this distance of it"}}},
    role="memory",
    doc="ExploreEQA's semantic value map on the graph: seen and visited places, the agent's own edges, and "
        "value lsv x gsv written at the prompt points (running average per place).",
)
class ValueMap(Node):
    """Keeps, for the episode, the trajectory, the position of every place seen (the
    current viewpoint and every navigable neighbour in its panorama), the neighbour list
    of every visited place (the agent's own graph) and a value per place. When the
    exploration scorer delivered scores for two or more points this tick, each point i
    gets sv_i = lsv_i x gsv with lsv_i = p_i x (points / 3) (ExploreEQA's scaling; 1 /
    points without `use_lsv`) and gsv = exp(worth / gsv_T) / gsv_F (1 without
    `use_gsv`); sv_i is averaged into the value of every seen place within `radius_m` of
    the point (the point's own place included): value <- (value x n + sv) / (n + 1), n
    the writes so far. Places never written have value 0. Without scores, or with fewer
    than two points, no value changes."""

    def reset(self, ctx):
        self.trajectory: list[str] = []
        self.positions: dict[str, list[float]] = {}
        self.edges: dict[str, list[str]] = {}
        self.values: dict[str, float] = {}
        self.writes: dict[str, int] = {}

    def step(self, inputs, ctx):
        state = inputs["state"]
        here = state["viewpoint"]
        if not self.trajectory or self.trajectory[-1] != here:
            self.trajectory.append(here)
        self.positions[here] = list(state["position"])
        neighbours = []
        for view in inputs["panorama"]["views"]:
            for loc in view["navigable"]:
                if loc["viewpoint"] not in neighbours:
                    neighbours.append(loc["viewpoint"])
                    self.positions.setdefault(loc["viewpoint"], list(loc["position"]))
        self.edges[here] = neighbours
        explore, points = inputs.get("explore"), inputs["points"]
        if explore is not None and len(points) >= 2:
            self._write(points, explore)
        return {"map": {"current": here, "trajectory": list(self.trajectory), "positions": self.positions,
                        "edges": self.edges, "values": self.values, "moves": state["moves"],
                        "heading": state["heading"]}}

    def _write(self, points: list[dict], explore: dict) -> None:
        cfg = self.config
        gsv = math.exp(explore["worth"] / cfg["gsv_T"]) / cfg["gsv_F"] if cfg["use_gsv"] else 1.0
        for point in points:
            lsv = explore["probs"].get(point["letter"], 0.0) * len(points) / 3 if cfg["use_lsv"] else 1 / len(points)
            value = lsv * gsv
            at = flat(point["position"])
            for vp, pos in self.positions.items():
                if vp == point["viewpoint"] or np.linalg.norm(flat(pos) - at) <= cfg["radius_m"]:
                    n = self.writes.get(vp, 0)
                    self.values[vp] = (self.values.get(vp, 0.0) * n + value) / (n + 1)
                    self.writes[vp] = n + 1


@node_type(
    "eqa.FrontierPlanner",
    inputs={"map": "ValueMap"},
    outputs={"move": {"type": "Text", "doc": "the next place to move to (a neighbour), towards the target frontier"},
             "exhausted": {"type": "Bool", "doc": "true when no frontier is left"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "unexplored_T": {"type": "number", "exclusiveMinimum": 0, "default": 0.2},
        "val_T": {"type": "number", "exclusiveMinimum": 0, "default": 0.5},
        "val_dir_T": {"type": "number", "exclusiveMinimum": 0, "default": 0.5},
        "dist_T": {"type": "number", "exclusiveMinimum": 0, "default": 10.0},
        "explored_radius_m": {"type": "number", "minimum": 0, "default": 2.0,
                              "description": "around each visited place the area counts as explored"},
        "unexplored_check_m": {"type": "number", "minimum": 0.5, "default": 3.0,
                               "description": "how far beyond a frontier the unexplored share is measured"},
        "value_check_m": {"type": "number", "minimum": 0.5, "default": 3.0,
                          "description": "how far beyond a frontier the direction's mean value is measured"},
        "min_dist_from_cur": {"type": "number", "minimum": 0, "default": 0.5},
        "min_random_init_steps": {"type": "integer", "minimum": 0, "default": 2,
                                  "description": "the first steps ignore the values"},
        "use_value": {"type": "boolean", "default": True, "description": "weigh frontiers by the value map"}}},
    role="planner",
    doc="ExploreEQA's frontier planner on the graph: frontier = seen but unvisited place, weight = "
        "exp(unexplored/0.2) exp(value/0.5) exp(direction value/0.5) exp(-distance/10), sampled in "
        "proportion; it commits to a target until it is reached.",
)
class FrontierPlanner(Node):
    """Chooses where to explore. Frontiers are the seen places not in the trajectory.
    While the committed target is still a frontier it keeps it; otherwise it weighs every
    frontier f: its outward direction is from the visited place that saw it nearest
    (first listed on ties) to f; along that direction, in 0.5 m steps beyond f, the
    unexplored share is the fraction of points farther than `explored_radius_m` from
    every visited place (up to `unexplored_check_m`), and the direction value is the
    mean of the non-zero values of seen places within 1 m of those points (up to
    `value_check_m`; 0 if none). Weight = exp(unexplored / unexplored_T) x exp(value(f)
    / val_T) x exp(direction value / val_dir_T) x exp(-distance / dist_T), distance
    being straight-line from the current place; the two value factors are left out
    during the first `min_random_init_steps` moves and without `use_value`; a frontier
    closer than `min_dist_from_cur` whose direction is within 30 degrees of the heading
    gets x 0.001. The target is drawn with probability proportional to its weight
    (the node's seeded generator: the same episode draws the same). `move` is the next
    place on the shortest route to the target over the agent's own graph (edges of
    visited places). With no frontier left, or none reachable, it emits only
    `exhausted: true`."""

    def reset(self, ctx):
        self.target: str | None = None

    def step(self, inputs, ctx):
        nav = inputs["map"]
        visited = set(nav["trajectory"])
        frontiers = [vp for vp in nav["positions"] if vp not in visited]
        if self.target not in frontiers:
            self.target = self._draw(nav, frontiers, visited, ctx) if frontiers else None
        path = shortest_route(nav["edges"], nav["positions"], nav["current"], self.target) if self.target else None
        if path is None or len(path) < 2:
            self.target = None
            return {"exhausted": True}
        ctx.log(target=self.target, frontiers=len(frontiers))
        return {"move": path[1], "exhausted": False}

    def _draw(self, nav: dict, frontiers: list[str], visited: set, ctx) -> str:
        cfg = self.config
        positions, values = nav["positions"], nav["values"]
        here = flat(positions[nav["current"]])
        visited_xy = np.array([flat(positions[v]) for v in nav["trajectory"]])
        seen = list(positions)
        seen_xy = np.array([flat(positions[v]) for v in seen])
        use_value = cfg["use_value"] and nav["moves"] >= cfg["min_random_init_steps"]
        weights = []
        for f in frontiers:
            at = flat(positions[f])
            parents = [v for v in nav["trajectory"] if f in nav["edges"].get(v, [])]
            parent = min(parents, key=lambda v: np.linalg.norm(flat(positions[v]) - at)) if parents else nav["current"]
            normal = at - flat(positions[parent])
            length = np.linalg.norm(normal)
            normal = normal / length if length > 0 else np.array([1.0, 0.0])
            ray = [at + normal * RAY_STEP_M * k for k in range(1, int(cfg["unexplored_check_m"] / RAY_STEP_M) + 1)]
            unexplored = np.mean([np.min(np.linalg.norm(visited_xy - p, axis=1)) > cfg["explored_radius_m"]
                                  for p in ray])
            weight = math.exp(unexplored / cfg["unexplored_T"])
            if use_value:
                ray_v = [at + normal * RAY_STEP_M * k for k in range(1, int(cfg["value_check_m"] / RAY_STEP_M) + 1)]
                near = {seen[i] for p in ray_v for i in np.flatnonzero(np.linalg.norm(seen_xy - p, axis=1) <= 1.0)}
                direction = [values[v] for v in near - {f} if values.get(v, 0.0) > 0]
                weight *= math.exp(values.get(f, 0.0) / cfg["val_T"])
                weight *= math.exp((float(np.mean(direction)) if direction else 0.0) / cfg["val_dir_T"])
            distance = float(np.linalg.norm(at - here))
            weight *= math.exp(-distance / cfg["dist_T"])
            facing = math.atan2(normal[0], normal[1])           # MatterSim heading: clockwise from +y
            if distance < cfg["min_dist_from_cur"] and abs(math.remainder(facing - nav["heading"], 2 * math.pi)) < math.pi / 6:
                weight *= 1e-3
            weights.append(weight)
        weights = np.asarray(weights)
        chosen = frontiers[int(ctx.rng.choice(len(frontiers), p=weights / weights.sum()))]
        top = sorted(zip(frontiers, weights), key=lambda fw: -fw[1])[:5]
        ctx.log(top_weights={f: round(float(w), 4) for f, w in top})
        return chosen

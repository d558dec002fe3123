"""`eqa.Observe`: what the agent sees from where it stands, and the points it may
ask about (ExploreEQA's prompt points), from the panorama's captions."""

from __future__ import annotations

import math

from executors.mp3d.panorama import describe
from harness.canvas.registry import Node, node_type

VIEWS_PER_ROW = 12


def heading_offset(view_heading: float, heading: float) -> float:
    """The view's heading relative to the agent's, in (-pi, pi]."""
    return math.remainder(view_heading - heading, 2 * math.pi)


def farthest_points(points: list[dict], k: int) -> list[dict]:
    """k points spread by heading: the one nearest the view centre first, then each time the one
    whose heading is farthest from those already taken (ties: the earlier in the list)."""
    if len(points) <= k:
        return list(points)
    chosen = [min(points, key=lambda p: abs(p["rel_heading"]))]
    while len(chosen) < k:
        rest = [p for p in points if p not in chosen]
        chosen.append(max(rest, key=lambda p: min(abs(math.remainder(p["rel_heading"] - c["rel_heading"], 2 * math.pi))
                                                  for c in chosen)))
    return sorted(chosen, key=lambda p: p["rel_heading"])


@node_type(
    "eqa.Observe",
    inputs={"panorama": "Panorama", "state": "NavState"},
    outputs={"view": {"type": "EQAView", "doc": "{viewpoint, heading, text, views: [{view_index, offset_deg, "
                                                 "caption, objects[, image]}]}"},
             "points": {"type": "List[PromptPoint]", "doc": "{letter, viewpoint, position, rel_heading, distance, "
                                                            "caption, objects}: neighbours in view, lettered"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "rows": {"type": "array", "items": {"enum": [0, 1, 2]}, "minItems": 1, "uniqueItems": True,
                 "default": [0, 1], "description": "view rows seen: 0 looks 30 degrees down, 1 level, 2 up"},
        "half_width": {"type": "integer", "minimum": 0, "maximum": 6, "default": 1,
                       "description": "view columns seen on each side of the heading (30 degrees each)"},
        "max_points": {"type": "integer", "minimum": 1, "maximum": 4, "default": 3,
                       "description": "most prompt points (ExploreEQA: 3)"},
        "point_fov_deg": {"type": "number", "minimum": 30, "maximum": 360, "default": 120,
                          "description": "neighbours within this field of view around the heading become points"}}},
    role="observation",
    doc="The agent's current view as caption text (views around its heading; ExploreEQA's camera looks 30 degrees "
        "down with a 120-degree field of view) and up to three lettered neighbours in view as prompt points.",
)
class Observe(Node):
    """Turns the 36-view panorama into the agent's current view and its prompt points. The
    view is the views of the configured `rows` whose column lies within `half_width`
    columns of the column nearest the agent's heading, left to right; its `text` has one
    line per view, '<offset> degrees, <down|level|up>: <caption> (objects: a, b)' ('no
    description' for an empty caption), and each view keeps its image in image mode. Points are the
    navigable neighbours (from any view of the panorama, each taken once, where it lies
    nearest a view centre) whose horizontal direction is within half of `point_fov_deg`
    of the heading; with more than `max_points` of them it keeps points spread by
    heading (the one nearest the heading first, then each time the one farthest in
    heading from those kept), ordered left to right and lettered A, B, C... Each point
    carries the caption and objects of the level view nearest its direction. A place
    with no neighbour in view gives no points. It has no state."""

    def step(self, inputs, ctx):
        cfg = self.config
        views, heading = inputs["panorama"]["views"], inputs["state"]["heading"]
        centre = round(heading / (2 * math.pi / VIEWS_PER_ROW)) % VIEWS_PER_ROW
        columns = [(centre + d) % VIEWS_PER_ROW for d in range(-cfg["half_width"], cfg["half_width"] + 1)]
        seen = []
        for row in sorted(cfg["rows"]):
            for column in columns:
                view = views[row * VIEWS_PER_ROW + column]
                entry = {"view_index": view["view_index"],
                         "offset_deg": round(math.degrees(heading_offset(view["heading"], heading))),
                         "caption": view.get("caption") or "", "objects": list(view.get("objects") or [])}
                if "image" in view:
                    entry["image"] = view["image"]
                seen.append(entry)
        text = "\n".join(f"{v['offset_deg']:+d} degrees, {('down', 'level', 'up')[v['view_index'] // 12]}: "
                         f"{describe(v)}" for v in seen)
        points = self._points(views, heading, inputs["state"].get("position"))
        return {"view": {"viewpoint": inputs["panorama"]["viewpoint"], "heading": heading, "text": text, "views": seen},
                "points": points}

    def _points(self, views: list[dict], heading: float, here) -> list[dict]:
        best: dict[str, tuple[float, dict]] = {}
        for view in views:
            for loc in view["navigable"]:
                angle = math.hypot(loc["rel_heading"], loc["rel_elevation"])
                if loc["viewpoint"] not in best or angle < best[loc["viewpoint"]][0]:
                    best[loc["viewpoint"]] = (angle, dict(loc, absolute=view["heading"] + loc["rel_heading"]))
        half = math.radians(self.config["point_fov_deg"]) / 2
        points = []
        for vp, (_, loc) in best.items():
            rel = heading_offset(loc["absolute"], heading)
            if abs(rel) <= half + 1e-9:
                level = views[VIEWS_PER_ROW + round(loc["absolute"] / (2 * math.pi / VIEWS_PER_ROW)) % VIEWS_PER_ROW]
                distance = math.dist(here, loc["position"]) if here else None
                points.append({"viewpoint": vp, "position": list(loc["position"]), "rel_heading": rel,
                               "distance": distance, "caption": level.get("caption") or "",
                               "objects": list(level.get("objects") or [])})
        kept = farthest_points(sorted(points, key=lambda p: p["rel_heading"]), self.config["max_points"])
        return [dict(p, letter=chr(ord("A") + i)) for i, p in enumerate(kept)]

"""What the agent can observe at a viewpoint: a sweep of the 36 discretised views.

MapGPT looks around with a second simulator: it starts at heading 0 looking
down 30°, turns right view by view and tilts up after every twelfth, and
records for each of the 36 views the navigable locations inside it (index,
heading and elevation relative to the view centre). The sweep does not depend
on where the agent looks, so it is computed once per viewpoint and cached.
Text observations (a BLIP caption and DETR objects of each view) come from the
caption files; with the real MatterSim and rendering on, each view's image is
kept too (converted from MatterSim's BGR to RGB).
"""

from __future__ import annotations

import math

VIEWS = 36
OBJECTS_PER_VIEW = 8


def view_text(captions: dict, viewpoint: str, view_index: int) -> dict:
    """{"caption", "objects"} of one view: the BLIP caption and the DETR classes, most confident first."""
    entry = (captions.get(viewpoint) or {}).get(str(view_index)) or {}
    dense = sorted(entry.get("dense_cap") or [], key=lambda d: -float(d.get("confidence") or 0))
    objects: list[str] = []
    for item in dense:
        name = item.get("obj_class")
        if name and name not in objects:
            objects.append(name)
    return {"caption": entry.get("global_cap") or "", "objects": objects[:OBJECTS_PER_VIEW]}


def sweep(sim, scan: str, viewpoint: str, captions: dict | None, keep_images: bool = False) -> list[dict]:
    """The 36 views of `viewpoint`, each {view_index, heading, elevation, navigable, caption, objects[, image]}.
    `navigable` lists the locations in the view other than the current one:
    {viewpoint, nav_index, rel_heading, rel_elevation}."""
    views = []
    for ix in range(VIEWS):
        if ix == 0:
            sim.newEpisode([scan], [viewpoint], [0.0], [math.radians(-30)])
        elif ix % 12 == 0:
            sim.makeAction([0], [1.0], [1.0])
        else:
            sim.makeAction([0], [1.0], [0.0])
        state = sim.getState()[0]
        if state.viewIndex != ix:
            raise RuntimeError(f"panorama sweep out of step: view {state.viewIndex}, expected {ix}")
        view = {"view_index": ix, "heading": state.heading, "elevation": state.elevation,
                "navigable": [{"viewpoint": loc.viewpointId, "nav_index": j,
                               "rel_heading": loc.rel_heading, "rel_elevation": loc.rel_elevation,
                               "position": [loc.x, loc.y, loc.z]}
                              for j, loc in enumerate(state.navigableLocations) if j > 0]}
        view.update(view_text(captions or {}, viewpoint, ix))
        if keep_images and state.rgb is not None:
            import numpy as np

            view["image"] = np.array(state.rgb, copy=True)[:, :, ::-1]   # MatterSim renders BGR
        views.append(view)
    return views


def describe(view: dict) -> str:
    """A view (or a candidate taken from one) as text: '<caption> (objects: a, b)', or
    'no description' when its caption is empty."""
    objects = ", ".join(view.get("objects") or [])
    text = view.get("caption") or "no description"
    return f"{text} (objects: {objects})" if objects else text


def view_candidate(view: dict, loc: dict, angle: float) -> dict:
    """A neighbour as seen in one view: the view's index, the neighbour's navigable index in it,
    its absolute heading and elevation, and that view's caption and objects (and image)."""
    out = {"viewpoint": loc["viewpoint"], "view_index": view["view_index"], "nav_index": loc["nav_index"],
           "heading": view["heading"] + loc["rel_heading"], "elevation": view["elevation"] + loc["rel_elevation"],
           "view_heading": view["heading"], "view_elevation": view["elevation"], "angle": angle,
           "position": loc["position"], "caption": view["caption"], "objects": view["objects"]}
    if "image" in view:
        out["image"] = view["image"]
    return out


def nearest_centre_candidates(views: list[dict]) -> list[dict]:
    """One candidate per navigable neighbour of the sweep: the view in which it lies nearest the
    view centre (smallest sqrt(rel_heading² + rel_elevation²); ties: the view swept first),
    in order of first appearance (MapGPT's rule)."""
    best: dict[str, dict] = {}
    for view in views:
        for loc in view["navigable"]:
            angle = math.sqrt(loc["rel_heading"] ** 2 + loc["rel_elevation"] ** 2)
            seen = best.get(loc["viewpoint"])
            if seen is None or angle < seen["angle"]:
                best[loc["viewpoint"]] = view_candidate(view, loc, angle)
    return list(best.values())

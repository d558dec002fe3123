"""Candidate builders: a panorama sweep -> the places the agent can move to next."""

from __future__ import annotations

import math

from executors.mp3d.panorama import nearest_centre_candidates, view_candidate
from harness.canvas.registry import Node, node_type

PORTS = dict(
    inputs={"panorama": "Panorama"},
    outputs={"candidates": {"type": "List[Candidate]",
                            "doc": "{viewpoint, view_index, nav_index, heading, elevation, angle, position, "
                                   "caption, objects[, image]} per reachable neighbour"}},
)


@node_type("mapgpt.CandidateBuilder", **PORTS, role="candidates",
           config_schema={"type": "object", "properties": {}, "additionalProperties": False},
           doc="For each neighbour, keeps the view in which it is nearest the view centre (MapGPT's rule); "
               "its caption and objects describe the candidate.")
class CandidateBuilder(Node):
    """Turns the 36-view panorama into one candidate per navigable neighbour (the current
    viewpoint is never a candidate). A neighbour that shows up in several views keeps the
    view in which it lies nearest the view centre (smallest sqrt(rel_heading^2 +
    rel_elevation^2); on a tie the view swept first keeps it). That view supplies the
    candidate's `view_index`, `nav_index`, `caption`, `objects` and, in image mode, its
    `image`; `heading`/`elevation` are the view's plus the neighbour's relative offsets.
    Candidates are listed in order of first appearance in the sweep (view 0 looks 30
    degrees down, views 12-23 level, 24-35 up). A place with no navigable neighbour gives
    an empty list. It has no config."""

    def step(self, inputs, ctx):
        return {"candidates": nearest_centre_candidates(inputs["panorama"]["views"])}


@node_type("mapgpt.LevelViewCandidates", **PORTS, role="candidates",
           config_schema={"type": "object", "properties": {}, "additionalProperties": False},
           doc="Like CandidateBuilder but prefers level views (elevation 0) for the description; a neighbour "
               "seen only looking up or down keeps its nearest such view.")
class LevelViewCandidates(Node):
    """Same candidates as `mapgpt.CandidateBuilder`, except for which view describes a
    neighbour: a level view (elevation 0) wins over any view looking up or down, and among
    views of the same kind the one where the neighbour is nearest the view centre wins
    (ties: the view swept first). A neighbour seen only in tilted views keeps its nearest
    tilted view. The chosen view also decides `view_index`, `nav_index`, the caption and
    objects, and so which turns `mapgpt.TurnThenMove` makes. An empty panorama gives an
    empty list. It has no config."""

    def step(self, inputs, ctx):
        best: dict[str, dict] = {}
        for view in inputs["panorama"]["views"]:
            for loc in view["navigable"]:
                angle = math.sqrt(loc["rel_heading"] ** 2 + loc["rel_elevation"] ** 2)
                rank = (view["elevation"] != 0.0, angle)
                seen = best.get(loc["viewpoint"])
                if seen is None or rank < seen["_rank"]:
                    best[loc["viewpoint"]] = dict(view_candidate(view, loc, angle), _rank=rank)
        return {"candidates": [{k: v for k, v in c.items() if k != "_rank"} for c in best.values()]}

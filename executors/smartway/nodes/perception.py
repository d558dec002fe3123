"""Observation and history review: the waypoints in view, and the navigator's memory of
where it has been (places, its own graph, the thoughts behind each step)."""

from __future__ import annotations

import math

from executors.mp3d.panorama import describe, nearest_centre_candidates
from harness.canvas.registry import Node, node_type


def direction_word(rel_heading: float, view_elevation: float) -> str:
    """A waypoint's direction from the agent's heading (MatterSim: clockwise, radians)."""
    if view_elevation > 0:
        return "up"
    if view_elevation < 0:
        return "down"
    degrees = math.degrees(math.remainder(rel_heading, 2 * math.pi))
    side = "right" if degrees > 0 else "left"
    magnitude = abs(degrees)
    if magnitude < 30:
        return "ahead"
    if magnitude < 75:
        return f"front {side}"
    if magnitude < 135:
        return side
    return "behind"


@node_type(
    "smartway.Observe",
    inputs={"panorama": "Panorama", "state": "NavState"},
    outputs={"waypoints": {"type": "List[Waypoint]",
                           "doc": "{viewpoint, direction, rel_heading_deg, distance, caption, objects, position"
                                  "[, image]} per navigable neighbour, left to right"}},
    config_schema={"type": "object", "properties": {}, "additionalProperties": False},
    role="observation",
    doc="The waypoints around the agent: every navigable neighbour (standing in for SmartWay's predicted "
        "waypoints) with its direction, distance and the caption and objects of the view towards it.",
)
class Observe(Node):
    """One waypoint per navigable neighbour of the current viewpoint (the graph replaces
    SmartWay's waypoint predictor). Each is described by the view in which it lies
    nearest the view centre (MapGPT's rule): that view's caption and detected objects.
    Its direction is relative to the agent's heading: 'up' or 'down' when that view is
    tilted, else by the angle to the waypoint: under 30 degrees 'ahead', under 75
    'front left'/'front right', under 135 'left'/'right', otherwise 'behind'; distance is
    straight-line metres; in image mode it carries that view's image. Waypoints are
    listed by relative heading, left to right. A place without neighbours gives an empty
    list. It has no config."""

    def step(self, inputs, ctx):
        state = inputs["state"]
        out = []
        for cand in nearest_centre_candidates(inputs["panorama"]["views"]):
            rel = math.remainder(cand["heading"] - state["heading"], 2 * math.pi)
            waypoint = {"viewpoint": cand["viewpoint"], "direction": direction_word(rel, cand["view_elevation"]),
                        "rel_heading_deg": round(math.degrees(rel), 1),
                        "distance": round(math.dist(state["position"], cand["position"]), 2),
                        "caption": cand["caption"], "objects": list(cand["objects"]),
                        "position": list(cand["position"])}
            if "image" in cand:
                waypoint["image"] = cand["image"]
            out.append(waypoint)
        return {"waypoints": sorted(out, key=lambda w: w["rel_heading_deg"])}


@node_type(
    "smartway.History",
    inputs={"state": "NavState", "waypoints": "List[Waypoint]",
            "decision": {"type": "Decision", "required": False,
                         "doc": "the decision acted on last step (delay 1), with its thought"}},
    outputs={"history": {"type": "NavHistory",
                         "doc": "{places: [viewpoints, index = place number], trajectory, edges, positions, "
                                "descriptions, steps: [{step, at, kind, to, thought}], backtracks, text}"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "max_steps_shown": {"type": "integer", "minimum": 0, "maximum": 30, "default": 8,
                            "description": "most recent steps shown in the history text"},
        "show_thoughts": {"type": "boolean", "default": True, "description": "show each step's thought"},
        "show_places": {"type": "boolean", "default": True,
                        "description": "describe the visited places in the history text"}}},
    role="history",
    doc="Reviews the history: numbers every place seen, keeps the trajectory, the agent's own graph and the "
        "decision (with its thought) of every step, and writes the history text the navigator reads.",
)
class History(Node):
    """The navigator's memory over the episode. Places get numbers in order of first sight
    (Place 0 = the start), the current viewpoint first, then its waypoints in order. The
    trajectory gains the current viewpoint whenever it changes; the neighbour list of a
    place (`edges`) is recorded at its first visit; a place's description is the
    caption and objects of the latest view towards it (the start has none until seen
    from elsewhere). A `decision` arriving (over a delay-1 edge: last step's) is recorded
    as a step {step, at, kind, to, thought} with place numbers; backtracks are counted.
    The text has 'Trajectory: Place a -> Place b ...', then the last `max_steps_shown`
    steps as 'Step k: at Place i, <moved to Place j | backtracked to Place j | stopped>'
    with '; thought: ...' when `show_thoughts`, then with `show_places` one line per
    visited place 'Place i: <description>' ('no description yet' when none). Before any
    step it says the navigation has just begun."""

    def reset(self, ctx):
        self.places: list[str] = []
        self.trajectory: list[str] = []
        self.edges: dict[str, list[str]] = {}
        self.positions: dict[str, list[float]] = {}
        self.descriptions: dict[str, str] = {}
        self.steps: list[dict] = []
        self.backtracks = 0

    def number(self, viewpoint: str) -> int:
        if viewpoint not in self.places:
            self.places.append(viewpoint)
        return self.places.index(viewpoint)

    def step(self, inputs, ctx):
        state, waypoints = inputs["state"], inputs["waypoints"]
        here = state["viewpoint"]
        decision = inputs.get("decision")
        if decision is not None and self.trajectory:
            self._record(decision)
        self.number(here)
        self.positions[here] = list(state["position"])
        if not self.trajectory or self.trajectory[-1] != here:
            self.trajectory.append(here)
        for w in waypoints:
            self.number(w["viewpoint"])
            self.positions.setdefault(w["viewpoint"], list(w["position"]))
            self.descriptions[w["viewpoint"]] = describe(w)
        self.edges.setdefault(here, [w["viewpoint"] for w in waypoints])
        return {"history": {"places": list(self.places), "trajectory": list(self.trajectory), "edges": self.edges,
                            "positions": self.positions, "descriptions": self.descriptions,
                            "steps": list(self.steps), "backtracks": self.backtracks, "current": here,
                            "text": self._text()}}

    def _record(self, decision: dict) -> None:
        kind = decision["kind"]
        to = decision.get("target") if kind == "backtrack" else decision.get("viewpoint")
        self.backtracks += kind == "backtrack"
        self.steps.append({"step": len(self.steps), "at": self.number(self.trajectory[-1]), "kind": kind,
                           "to": self.number(to) if to else None, "thought": decision.get("thought") or ""})

    def _text(self) -> str:
        cfg = self.config
        if not self.steps and len(self.trajectory) <= 1:
            lines = ["The navigation has just begun: no step taken yet."]
        else:
            lines = ["Trajectory: " + " -> ".join(f"Place {self.places.index(vp)}" for vp in self.trajectory)]
        for s in self.steps[len(self.steps) - cfg["max_steps_shown"]:] if cfg["max_steps_shown"] else []:
            did = {"move": f"moved to Place {s['to']}", "backtrack": f"backtracked to Place {s['to']}",
                   "stop": "stopped"}[s["kind"]]
            lines.append(f"Step {s['step']}: at Place {s['at']}, {did}"
                         + (f"; thought: {s['thought']}" if cfg["show_thoughts"] and s["thought"] else ""))
        if cfg["show_places"]:
            for vp in dict.fromkeys(self.trajectory):
                lines.append(f"Place {self.places.index(vp)}: {self.descriptions.get(vp, 'no description yet')}")
        return "\n".join(lines)

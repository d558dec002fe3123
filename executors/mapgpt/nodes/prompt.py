"""`mapgpt.PromptBuilder`: the planner's per-step message and its lettered action options."""

from __future__ import annotations

import math

from executors.mapgpt.nodes.memory import NO_HISTORY, NO_PLAN, observation_text
from harness.canvas.registry import Node, node_type

STOP_TEXT = "stop"


def direction(candidate: dict, agent_heading: float) -> str:
    """A coarse direction word for a candidate, from its view relative to the agent's heading."""
    if candidate["view_elevation"] > 0:
        return "go up"
    if candidate["view_elevation"] < 0:
        return "go down"
    rel = candidate["view_heading"] - agent_heading
    if rel == 0:
        return "go forward"
    rel = math.remainder(rel, 2 * math.pi)
    if abs(rel) > math.pi / 2:
        return "turn around"
    return "turn right" if rel > 0 else "turn left"


def place_number(nav_map: dict, viewpoint: str) -> int:
    return nav_map["places"].index(viewpoint)


def build_options(candidates: list[dict], nav_map: dict, heading: float, offer_stop: bool) -> list[dict]:
    options = []
    if offer_stop:
        options.append({"kind": "stop", "text": STOP_TEXT})
    for cand in candidates:
        number = place_number(nav_map, cand["viewpoint"])
        options.append({"kind": "move", "viewpoint": cand["viewpoint"], "place": number,
                        "text": f"{direction(cand, heading)} to Place {number}"})
    for i, option in enumerate(options):
        option["letter"] = chr(ord("A") + i)
    return options


def map_sections(nav_map: dict, candidates: list[dict]) -> tuple[str, str, str]:
    """Trajectory, map (edges of visited places) and places seen but neither visited nor adjacent now."""
    trajectory = "Place " + " ".join(str(place_number(nav_map, vp)) for vp in nav_map["trajectory"])
    lines = []
    for vp in dict.fromkeys(nav_map["trajectory"]):
        neighbours = ", ".join(str(place_number(nav_map, n)) for n in nav_map["edges"].get(vp, []))
        lines.append(f"Place {place_number(nav_map, vp)} is connected with Places {neighbours}")
    adjacent = {c["viewpoint"] for c in candidates}
    unvisited = [f"Place {i}: {nav_map['observations'].get(vp, 'not described')}"
                 for i, vp in enumerate(nav_map["places"])
                 if vp not in nav_map["trajectory"] and vp not in adjacent]
    return trajectory, "\n".join(lines), "\n".join(unvisited) or "Nothing yet."


@node_type(
    "mapgpt.PromptBuilder",
    inputs={"instruction": "Text", "map": "NavMap", "candidates": "List[Candidate]", "state": "NavState",
            "history": {"type": "Text", "required": False, "doc": "planning memory's history (delay 1)"},
            "planning": {"type": "Text", "required": False, "doc": "planning memory's latest plan (delay 1)"}},
    outputs={"prompt": {"type": "Text", "doc": "the planner's user message for this step"},
             "options": {"type": "List[Option]", "doc": "{letter, kind: stop|move, text, viewpoint, place}"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "stop_after": {"type": "integer", "minimum": 0, "maximum": 15, "default": 3,
                       "description": "the stop option is offered from this step on (steps count from 0)"},
        "show_instruction": {"type": "boolean", "default": True, "description": "begin with the instruction line"},
        "show_map": {"type": "boolean", "default": True, "description": "include the trajectory and map sections"},
        "show_unvisited": {"type": "boolean", "default": True,
                           "description": "include places seen but not visited (with their descriptions)"},
        "show_observations": {"type": "boolean", "default": True,
                              "description": "describe each option's place (caption and objects)"},
        "show_history": {"type": "boolean", "default": True, "description": "include the action history"},
        "show_planning": {"type": "boolean", "default": True, "description": "include the previous plan"}}},
    role="prompt",
    doc="Writes MapGPT's step message: instruction, history, trajectory, map, seen-but-unvisited places, "
        "previous planning and lettered options (stop first, from step `stop_after`).",
)
class PromptBuilder(Node):
    """Writes the planner's step message and its lettered options. Options: 'stop' first
    when the decision count is at least `stop_after`, then one move per candidate in
    candidate order, 'go up'/'go down' when the candidate's view is tilted, else 'go
    forward' when its view heading equals the agent's heading exactly, 'turn around' when
    it differs by more than 90 degrees, else 'turn left'/'turn right', each followed by
    'to Place <n>' (the map's place number); letters A, B, ... in that order. The message
    has the lines (with `show_instruction`) 'Instruction: ...'; with `show_history` 'History: ...'; with `show_map`
    the trajectory as place numbers, 'Map:' with one 'Place i is connected with Places ...'
    line per visited place, and with `show_unvisited` (only together with `show_map`)
    'Supplementary Info:' listing places seen but neither visited nor adjacent now, with
    their observations ('not described' when none; 'Nothing yet.' when no such place);
    with `show_planning` 'Previous Planning:'; then 'Action options (step k):' and one
    line per option, a move followed by its place's caption and objects when
    `show_observations` is set. A missing or empty `history`/`planning` input shows the
    start texts of `mapgpt.PlanningMemory`. Empty candidates before `stop_after` give an
    empty option list. A candidate missing from the map raises (a node error)."""

    def step(self, inputs, ctx):
        cfg = self.config
        state, nav_map, candidates = inputs["state"], inputs["map"], inputs["candidates"]
        step = state["decisions"]
        options = build_options(candidates, nav_map, state["heading"], step >= cfg["stop_after"])
        lines = [f"Instruction: {inputs['instruction']}"] if cfg["show_instruction"] else []
        if cfg["show_history"]:
            lines.append(f"History: {inputs.get('history') or NO_HISTORY}")
        if cfg["show_map"]:
            trajectory, edges, unvisited = map_sections(nav_map, candidates)
            lines += [f"Trajectory: {trajectory}", f"Map:\n{edges}"]
            if cfg["show_unvisited"]:
                lines.append(f"Supplementary Info:\n{unvisited}")
        if cfg["show_planning"]:
            lines.append(f"Previous Planning:\n{inputs.get('planning') or NO_PLAN}")
        lines.append(f"Action options (step {step}):")
        by_vp = {c["viewpoint"]: c for c in candidates}
        for option in options:
            text = f"{option['letter']}. {option['text']}"
            if option["kind"] == "move" and cfg["show_observations"]:
                text += f" — {observation_text(by_vp[option['viewpoint']])}"
            lines.append(text)
        return {"prompt": "\n".join(lines), "options": options}

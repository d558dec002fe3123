"""Map memory (places, adjacency, trajectory, one observation per place) and
planning memory (the planner's latest plan and the action history)."""

from __future__ import annotations

from executors.mp3d.panorama import describe as observation_text  # noqa: F401  (the prompt builder uses it)
from harness.canvas.registry import Node, node_type

NO_PLAN = "Navigation has just started, with no planning yet."
NO_HISTORY = "The navigation has just begun, with no history."


@node_type(
    "mapgpt.MapMemory",
    inputs={"state": "NavState", "candidates": "List[Candidate]"},
    outputs={"map": {"type": "NavMap", "doc": "{places: [viewpoint ids; index = place number], edges: "
                                              "{viewpoint: [neighbour ids]}, trajectory, observations: "
                                              "{viewpoint: text}, images: {viewpoint: image}, current}"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "keep_first_observation": {"type": "boolean", "default": False,
                                   "description": "keep the first description of a place instead of the latest"}}},
    role="memory",
    doc="MapGPT's topological map: every place seen gets a number in order of first sight; the edges of "
        "visited places, the trajectory, and one observation (the latest candidate view) per place.",
)
class MapMemory(Node):
    """Builds MapGPT's topological map over the episode. Each tick the current viewpoint and
    then every candidate not yet known get the next place number (numbers follow first
    sight and never change); the current viewpoint is appended to the trajectory unless it
    is already the last entry (a place visited again later appears again). A place's
    neighbour list (`edges`) is recorded at its first visit only; later visits do not
    update it. Every candidate's view becomes that place's observation ('<caption>
    (objects: a, b)', 'no description' when the caption is empty), overwriting the earlier
    one unless `keep_first_observation` is set; in image mode its image is stored with it.
    A place's observation always comes from a view towards it from a neighbouring place,
    never from its own panorama, so the start place has none until it is seen from
    elsewhere. Empty candidates add only the current place (with an empty edge list on its
    first visit)."""

    def reset(self, ctx):
        self.places: list[str] = []
        self.edges: dict[str, list[str]] = {}
        self.trajectory: list[str] = []
        self.observations: dict[str, str] = {}
        self.images: dict[str, object] = {}

    def step(self, inputs, ctx):
        here = inputs["state"]["viewpoint"]
        if here not in self.places:
            self.places.append(here)
        if not self.trajectory or self.trajectory[-1] != here:
            self.trajectory.append(here)
        for cand in inputs["candidates"]:
            vp = cand["viewpoint"]
            if vp not in self.places:
                self.places.append(vp)
            if vp not in self.observations or not self.config["keep_first_observation"]:
                self.observations[vp] = observation_text(cand)
                if "image" in cand:
                    self.images[vp] = cand["image"]
        self.edges.setdefault(here, [c["viewpoint"] for c in inputs["candidates"]])
        return {"map": {"places": self.places, "edges": self.edges, "trajectory": self.trajectory,
                        "observations": self.observations, "images": self.images, "current": here}}


@node_type(
    "mapgpt.PlanningMemory",
    inputs={"planning": {"type": "Text", "required": False, "doc": "the planner's new plan (parser output)"},
            "choice": {"type": "Choice", "required": False, "doc": "the option taken this step"}},
    outputs={"planning": {"type": "Text", "doc": "the latest plan (a start text before the first)"},
             "history": {"type": "Text", "doc": "'step 0: <option>, step 1: ...'"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "max_history": {"type": "integer", "minimum": 1, "maximum": 30, "default": 15,
                        "description": "most recent steps kept in the history text"}}},
    role="planning memory",
    doc="Keeps the planner's latest plan and a one-line history of the options taken; wire its outputs "
        "back to the prompt builder with delay 1.",
)
class PlanningMemory(Node):
    """Keeps the planner's latest plan and a history of the options taken. A non-empty
    `planning` input replaces the stored plan (the parser emits 'No plans currently.' for
    a reply without one, which replaces it too); a missing or empty input keeps it. Each
    `choice` that arrives appends its option text (e.g. 'turn left to Place 3', 'stop').
    `history` lists the last `max_history` entries as 'step k: <text>' joined by ', ', with
    k counted from the episode's first entry; before any it is 'The navigation has just
    begun, with no history.' and the plan is 'Navigation has just started, with no
    planning yet.' Entries count choices received, not simulator decisions."""

    def reset(self, ctx):
        self.plan = NO_PLAN
        self.steps: list[str] = []

    def step(self, inputs, ctx):
        if inputs.get("planning"):
            self.plan = inputs["planning"]
        choice = inputs.get("choice")
        if choice is not None:
            self.steps.append(choice["option"]["text"])
        kept = self.steps[-self.config["max_history"]:]
        first = len(self.steps) - len(kept)
        history = ", ".join(f"step {first + i}: {text}" for i, text in enumerate(kept)) or NO_HISTORY
        return {"planning": self.plan, "history": history}


@node_type(
    "mapgpt.RouteHistory",
    inputs={"map": "NavMap", "candidates": "List[Candidate]",
            "choice": {"type": "Choice", "required": False,
                       "doc": "the option taken at the step before (wire it with delay 1)"}},
    outputs={"history": {"type": "List[Any]", "doc": "[{round, decision, outcome: {place, step}, observation: "
                                                     "{neighbours: [{place, description}]}}, ...]"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "max_rounds": {"type": "integer", "minimum": 1, "maximum": 50, "default": 30,
                       "description": "oldest rounds are dropped beyond this"}}},
    role="history",
    doc="The route so far in place numbers, one round per step (the start included), as a context harness "
        "reads it (schemas/context_history_mapgpt.schema.json).",
)
class RouteHistory(Node):
    """One round per tick: round 1 is the start (decision null), each later round's decision
    is the text of the option taken at the step before (e.g. 'turn left to Place 3', from the
    `choice` input), its outcome the place the agent stands at now and the decisions made so
    far ({place, step}), its observation the places reachable from here in candidate order
    with each one's description as the map memory holds it now ('<caption> (objects: ...)').
    Place numbers are the map memory's. Rounds are numbered 1, 2, ... and the oldest are
    dropped beyond `max_rounds`. Each tick's outcome and observation are logged unabridged
    (rollout recorders read them)."""

    def reset(self, ctx):
        self.rounds: list[dict] = []
        self.count = 0

    def step(self, inputs, ctx):
        nav_map, choice = inputs["map"], inputs.get("choice")
        number = nav_map["places"].index
        outcome = {"place": number(nav_map["current"]), "step": self.count}
        observation = {"neighbours": [{"place": number(c["viewpoint"]),
                                       "description": nav_map["observations"].get(c["viewpoint"], "not described")}
                                      for c in inputs["candidates"]]}
        ctx.log(observation=observation, outcome=outcome)
        self.count += 1
        self.rounds.append({"round": self.count, "decision": choice["option"]["text"] if choice else None,
                            "outcome": outcome, "observation": observation})
        del self.rounds[:-self.config["max_rounds"]]
        return {"history": list(self.rounds)}

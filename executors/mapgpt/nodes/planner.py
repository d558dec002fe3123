"""Planner nodes without a model.

`mapgpt.HeuristicPlanner` answers in the LLM planner's format (Thought / New
Planning / Action: <letter>) so that the same parser reads either. It walks
along the instruction: it estimates how many moves the instruction describes,
expects the landmark words of the part it has reached to show up in the next
place's caption and objects, follows the direction words of that part, avoids
places already visited unless every option was visited (then it backtracks
towards the place with the most unvisited neighbours on the map), and stops
once the estimated number of moves is done or the instruction's final
landmark is in view of where it stands.
"""

from __future__ import annotations

import math

from executors.mp3d.instructions import landmarks, segments, words
from harness.canvas.registry import Node, node_type

DIRECTIONS = {"left": "turn left", "right": "turn right", "straight": "go forward", "forward": "go forward",
              "around": "turn around", "upstairs": "go up", "downstairs": "go down", "up": "go up",
              "down": "go down"}


@node_type(
    "mapgpt.HeuristicPlanner",
    inputs={"instruction": "Text", "map": "NavMap", "candidates": "List[Candidate]", "state": "NavState",
            "options": "List[Option]"},
    outputs={"text": {"type": "Text", "doc": "a reply in the LLM planner's format (Thought / New Planning / Action)"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "moves_per_segment": {"type": "number", "minimum": 0.3, "maximum": 2.0, "default": 0.8,
                              "description": "moves expected per instruction segment (split at , . ; and then)"},
        "landmark_weight": {"type": "number", "minimum": 0, "maximum": 5, "default": 1.0,
                            "description": "score per landmark word of the current segment seen at a place"},
        "direction_weight": {"type": "number", "minimum": 0, "maximum": 5, "default": 0.6,
                             "description": "score when an option's direction matches the segment's direction word"},
        "revisit_penalty": {"type": "number", "minimum": 0, "maximum": 10, "default": 3.0,
                            "description": "score subtracted from places already visited"},
        "final_landmark_stop": {"type": "boolean", "default": True,
                                "description": "stop early when the last segment's landmarks describe the places in view"}}},
    role="planner",
    doc="Model-free planner: instruction landmarks vs captions/objects, direction words, no revisits "
        "(backtracking on the map when stuck), stop after the estimated number of moves.",
)
class HeuristicPlanner(Node):
    """A model-free planner that answers in the LLM planner's format ('Thought: ... / New
    Planning: ... / Action: <letter>'), so the same parser reads it. The instruction is
    split into segments at '.', ',', ';', '!', 'then' and 'and'; the expected number of
    moves is max(2, round(`moves_per_segment` x segments)); at decision k it works on
    segment int(k x segments / expected) (the last one once past the end). When a stop
    option is offered it stops once k reaches the expected number of moves, or, with
    `final_landmark_stop`, when every landmark word of the last segment appears in the
    map's observation of the current place (that text is the view towards this place from
    where it was a candidate; the start place has none; a last segment without landmark
    words never triggers this). Otherwise, if every move option leads to a place in the
    trajectory, it backtracks: it picks the option whose place has the most unvisited
    neighbours on the map, ties going to the most recently visited. Else each move is
    scored `landmark_weight` x (landmark words of the segment found in the candidate's
    caption and objects) + `direction_weight` if the option text starts with the
    segment's first direction word (left, right, straight/forward, around, up, down),
    - `revisit_penalty` if visited, - 0.001 x the candidate's angle from its view centre;
    the highest score wins, ties to the earliest option. Landmark words are the lowercase
    words of 3+ letters not in a stop-word list, with a plural 's' dropped; that also
    turns 'upstairs'/'downstairs' into 'upstair'/'downstair', so those two listed
    direction words never match. With no move option and no stop taken it raises (a node
    error). It is deterministic."""

    def step(self, inputs, ctx):
        cfg = self.config
        options = inputs["options"]
        parts = segments(inputs["instruction"])
        expected = max(2, round(cfg["moves_per_segment"] * len(parts)))
        step = inputs["state"]["decisions"]
        current = parts[min(len(parts) - 1, int(step * len(parts) / expected))]
        stop = next((o for o in options if o["kind"] == "stop"), None)
        if stop is not None and (step >= expected or self._at_goal(inputs, parts[-1])):
            return {"text": self._reply(f"I have covered about {step} of {expected} expected moves "
                                        f"and reached the end of the instruction.", "Stop here.", stop)}
        nav_map = inputs["map"]
        visited = set(nav_map["trajectory"])
        by_vp = {c["viewpoint"]: c for c in inputs["candidates"]}
        goal_words = set(landmarks(current))
        cue = next((DIRECTIONS[w] for w in words(current) if w in DIRECTIONS), None)
        moves = [o for o in options if o["kind"] == "move"]
        if all(o["viewpoint"] in visited for o in moves):
            best = max(moves, key=lambda o: self._frontier(nav_map, o["viewpoint"], visited))
            why = "every option was visited already, so I backtrack towards unexplored places"
        else:
            def score(option):
                cand = by_vp[option["viewpoint"]]
                seen = set(words(cand["caption"] + " " + " ".join(cand["objects"])))
                value = cfg["landmark_weight"] * len(goal_words & seen)
                if cue is not None and option["text"].startswith(cue):
                    value += cfg["direction_weight"]
                if option["viewpoint"] in visited:
                    value -= cfg["revisit_penalty"]
                return value - 1e-3 * cand["angle"]
            best = max(moves, key=score)
            why = f"the current part of the instruction is '{current}'"
        return {"text": self._reply(why, f"Follow '{current}', then continue with the instruction.", best)}

    def _at_goal(self, inputs, last_part: str) -> bool:
        if not self.config["final_landmark_stop"]:
            return False
        goal = set(landmarks(last_part))
        if not goal:
            return False
        here = inputs["map"]["observations"].get(inputs["state"]["viewpoint"], "")
        return goal <= set(words(here))

    @staticmethod
    def _frontier(nav_map: dict, viewpoint: str, visited: set) -> float:
        neighbours = nav_map["edges"].get(viewpoint, [])
        return sum(1 for n in neighbours if n not in visited) - 0.01 * nav_map["trajectory"][::-1].index(viewpoint) \
            if viewpoint in nav_map["trajectory"] else math.inf

    @staticmethod
    def _reply(thought: str, plan: str, option: dict) -> str:
        return f"Thought: {thought}\nNew Planning: {plan}\nAction: {option['letter']}"

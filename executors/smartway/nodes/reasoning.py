"""The navigator's per-step reasoning: estimate how far the instruction is done, choose
among the waypoints (or stop, or go back), and fuse the two thoughts into one decision.
Each stage has a model-free type and a model type with the same ports."""

from __future__ import annotations

from executors.mp3d.instructions import words
from executors.mp3d.panorama import describe
from executors.mp3d.prompting import PROMPTED_SCHEMA, Prompted
from harness.canvas.registry import Node, node_type

PROGRESS_PORT = {"type": "Progress", "doc": "{current: sub-instruction index, done: bool, thought}"}
CHOICE_PORT = {"type": "Choice", "doc": "{kind: move|stop|backtrack, viewpoint (move), target (backtrack), "
                                        "ranked: [waypoints best first], thought}"}


def plan_text(plan: dict, progress: dict | None = None) -> str:
    lines = []
    for sub in plan["sub_instructions"]:
        mark = ""
        if progress is not None:
            mark = " [done]" if sub["index"] < progress["current"] else (" [current]" if sub["index"] == progress["current"] else "")
        lines.append(f"{sub['index'] + 1}. {sub['action']}: {sub['text']} (landmarks: {', '.join(sub['landmarks']) or 'none'}){mark}")
    return "\n".join(lines)


def waypoint_text(waypoints: list[dict], history: dict) -> str:
    visited = set(history["trajectory"])
    return "\n".join(f"{chr(ord('A') + i)}. Place {history['places'].index(w['viewpoint'])}, {w['direction']}, "
                     f"{w['distance']:.1f} m{' (visited)' if w['viewpoint'] in visited else ''}: {describe(w)}"
                     for i, w in enumerate(waypoints))


def backtrack_target(history: dict) -> str | None:
    """The most recently visited place (before the current one) that still has unvisited neighbours."""
    visited = set(history["trajectory"])
    for vp in reversed(history["trajectory"][:-1]):
        if any(n not in visited for n in history["edges"].get(vp, [])):
            return vp
    return None


# -- completion estimation --------------------------------------------------------------

@node_type(
    "smartway.HeuristicProgress",
    inputs={"plan": "InstructionPlan", "history": "NavHistory", "state": "NavState"},
    outputs={"progress": PROGRESS_PORT},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "moves_per_sub": {"type": "number", "minimum": 0.3, "maximum": 3.0, "default": 0.8,
                          "description": "moves expected per sub-instruction"},
        "landmark_advance": {"type": "boolean", "default": True,
                             "description": "a sub-instruction is complete once its landmark words describe the "
                                            "current place"}}},
    role="progress",
    doc="Model-free completion estimate: the sub-instruction reached follows the moves made against the moves "
        "expected, brought forward when the current place shows the current sub-instruction's landmarks.",
)
class HeuristicProgress(Node):
    """Expects E = max(2, round(`moves_per_sub` x sub-instructions)) moves. At m moves the
    sub-instruction by pace is int(m x subs / E) (the last once past the end); with
    `landmark_advance`, the estimate never goes back and moves one past the current
    sub-instruction when every landmark word of it is in the current place's description
    (the view towards it from where it was a waypoint; the start place has none). `done`
    when m >= E, or when the current sub-instruction is the last and its landmark words
    are all in the current place's description (a last sub-instruction without landmark
    words never counts as reached that way). The thought says which sub-instruction it
    is on and why."""

    def reset(self, ctx):
        self.current = 0

    def step(self, inputs, ctx):
        subs = inputs["plan"]["sub_instructions"]
        history, moves = inputs["history"], inputs["state"]["moves"]
        expected = max(2, round(self.config["moves_per_sub"] * len(subs)))
        here = set(words(history["descriptions"].get(history["current"], "")))
        by_pace = min(len(subs) - 1, int(moves * len(subs) / expected))
        self.current = max(self.current, by_pace)
        if self.config["landmark_advance"] and self.current < len(subs) - 1 and self._reached(subs, here):
            self.current += 1
        last_reached = self.current == len(subs) - 1 and self._reached(subs, here)
        done = moves >= expected or last_reached
        why = ("the landmarks of the last part are here" if last_reached else
               f"{moves} of about {expected} moves made" if done else
               f"working on part {self.current + 1} of {len(subs)}: {subs[self.current]['text']}")
        return {"progress": {"current": self.current, "done": done, "thought": why}}

    def _reached(self, subs: list[dict], here: set[str]) -> bool:
        marks = set(subs[self.current]["landmarks"])
        return bool(marks) and marks <= here


@node_type(
    "smartway.LLMProgress",
    inputs={"plan": "InstructionPlan", "history": "NavHistory", "state": "NavState"},
    outputs={"progress": PROGRESS_PORT},
    config_schema=PROMPTED_SCHEMA, role="progress", uses_model=True,
    doc="Asks the pinned model which sub-instruction the agent is on and whether the whole instruction is "
        "done, from the decomposed instruction and the history (Open-Nav's progress estimation).",
)
class LLMProgress(Prompted, Node):
    """Renders `user_template` with {{plan}} (the sub-instructions, numbered from 1, the
    previous estimate marked), {{history}} (the history text) and {{moves}}, and reads a
    JSON object {"current": <sub-instruction number from 1>, "done": true|false,
    "thought": "..."}. The number is clamped to the plan and never goes back; a reply
    without that object keeps the previous estimate with done false (logged as
    `unparsed`). No retry. A graph without a pinned model_profile, or a missing prompt
    file, is a node error."""

    def reset(self, ctx):
        self.current = 0

    def step(self, inputs, ctx):
        subs = inputs["plan"]["sub_instructions"]
        previous = {"current": self.current, "done": False}
        value, _ = self.ask(ctx, {"plan": plan_text(inputs["plan"], previous), "history": inputs["history"]["text"],
                                  "moves": inputs["state"]["moves"]})
        if value is None:
            return {"progress": {"current": self.current, "done": False, "thought": "no estimate"}}
        try:
            number = int(value.get("current", self.current + 1))
        except (TypeError, ValueError):
            number = self.current + 1
        self.current = max(self.current, min(len(subs) - 1, max(0, number - 1)))
        return {"progress": {"current": self.current, "done": value.get("done") is True,
                             "thought": str(value.get("thought") or "")}}


# -- choosing among the waypoints -------------------------------------------------------

@node_type(
    "smartway.HeuristicChooser",
    inputs={"plan": "InstructionPlan", "progress": "Progress", "history": "NavHistory",
            "waypoints": "List[Waypoint]"},
    outputs={"choice": CHOICE_PORT},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "landmark_weight": {"type": "number", "minimum": 0, "maximum": 5, "default": 1.0},
        "next_landmark_weight": {"type": "number", "minimum": 0, "maximum": 5, "default": 0.5},
        "direction_weight": {"type": "number", "minimum": 0, "maximum": 5, "default": 0.6},
        "revisit_penalty": {"type": "number", "minimum": 0, "maximum": 10, "default": 3.0}}},
    role="chooser",
    doc="Model-free waypoint choice: the current and next sub-instructions' landmarks in each waypoint's "
        "description, its direction against the action, a penalty for visited places; stop when the progress "
        "estimate says done; back to an earlier place when every waypoint was visited.",
)
class HeuristicChooser(Node):
    """When the progress estimate is done it chooses 'stop'. When every waypoint was
    visited (or there is none) it chooses 'backtrack' to the most recently visited place
    that still has unvisited neighbours, or, when there is no such place, a move to the
    first waypoint. Otherwise it scores each waypoint: `landmark_weight` x the current
    sub-instruction's landmark words in its caption and objects + `next_landmark_weight`
    x the next one's + `direction_weight` when its direction matches the action ('turn
    left': left/front left, 'turn right': right/front right, 'go straight'/'enter'/'exit':
    ahead, 'turn around': behind, 'go up'/'go down': up/down) - `revisit_penalty` when
    visited - 0.001 x |relative heading in degrees|; the best is moved to (ties: the
    leftmost). `ranked` lists every waypoint best first."""

    MATCHES = {"turn left": ("left", "front left"), "turn right": ("right", "front right"), "go straight": ("ahead",),
               "enter": ("ahead",), "exit": ("ahead",), "turn around": ("behind",), "go up": ("up",),
               "go down": ("down",)}

    def step(self, inputs, ctx):
        cfg, subs = self.config, inputs["plan"]["sub_instructions"]
        progress, history, waypoints = inputs["progress"], inputs["history"], inputs["waypoints"]
        visited = set(history["trajectory"])
        if progress["done"]:
            return {"choice": {"kind": "stop", "ranked": [], "thought": "the instruction looks complete"}}
        sub = subs[progress["current"]]
        after = subs[progress["current"] + 1] if progress["current"] + 1 < len(subs) else None

        def score(w):
            seen = set(words(w["caption"] + " " + " ".join(w["objects"])))
            value = cfg["landmark_weight"] * len(set(sub["landmarks"]) & seen)
            if after is not None:
                value += cfg["next_landmark_weight"] * len(set(after["landmarks"]) & seen)
            if w["direction"] in self.MATCHES.get(sub["action"], ()):
                value += cfg["direction_weight"]
            if w["viewpoint"] in visited:
                value -= cfg["revisit_penalty"]
            return value - 0.001 * abs(w["rel_heading_deg"])

        ranked = sorted(waypoints, key=lambda w: -score(w))
        if not waypoints or all(w["viewpoint"] in visited for w in waypoints):
            target = backtrack_target(history)
            if target is not None:
                return {"choice": {"kind": "backtrack", "target": target, "ranked": [w["viewpoint"] for w in ranked],
                                   "thought": "every waypoint here was visited: go back to an unexplored place"}}
        if not waypoints:
            return {"choice": {"kind": "stop", "ranked": [], "thought": "nowhere to go"}}
        best = ranked[0]
        return {"choice": {"kind": "move", "viewpoint": best["viewpoint"], "ranked": [w["viewpoint"] for w in ranked],
                           "thought": f"'{sub['text']}': the waypoint {best['direction']} fits best"}}


@node_type(
    "smartway.LLMChooser",
    inputs={"plan": "InstructionPlan", "progress": "Progress", "history": "NavHistory",
            "waypoints": "List[Waypoint]"},
    outputs={"choice": CHOICE_PORT},
    config_schema=PROMPTED_SCHEMA, role="chooser", uses_model=True,
    doc="Asks the pinned model to choose a lettered waypoint, to stop, or to go back to a numbered place it "
        "visited, given the instruction's parts, the progress estimate and the history.",
)
class LLMChooser(Prompted, Node):
    """Renders `user_template` with {{plan}} (sub-instructions with the current one
    marked), {{progress}} (the estimate's thought and whether it thinks the instruction
    is done), {{history}} and {{waypoints}} (one line per waypoint: 'A. Place 3, front
    left, 2.1 m (visited): <caption> (objects: ...)'; in image mode the waypoints' images
    follow the text in the same order), and reads {"thought": "...",
    "action": "<letter>" | "stop" | "backtrack", "place": <number, for backtrack>}. A
    letter of a listed waypoint moves there; 'backtrack' goes to the named visited place
    (another or no number: the most recent visited place with unvisited neighbours);
    anything else, or no JSON object, moves to the first unvisited waypoint (the first
    waypoint when all are visited; stop when there is none), logged as `fallback`. No
    retry. `ranked` is the waypoints in listed order. A graph without a pinned
    model_profile, or a missing prompt file, is a node error."""

    def step(self, inputs, ctx):
        history, waypoints = inputs["history"], inputs["waypoints"]
        progress = inputs["progress"]
        value, _ = self.ask(ctx, {
            "plan": plan_text(inputs["plan"], progress), "history": history["text"],
            "waypoints": waypoint_text(waypoints, history) or "none",
            "progress": f"{progress['thought']} (done: {'yes' if progress['done'] else 'no'})"},
            [w["image"] for w in waypoints if "image" in w])
        ranked = [w["viewpoint"] for w in waypoints]
        action = str((value or {}).get("action") or "").strip()
        thought = str((value or {}).get("thought") or "")
        letters = {chr(ord("A") + i): w["viewpoint"] for i, w in enumerate(waypoints)}
        if action.upper() in letters and len(action) == 1:
            return {"choice": {"kind": "move", "viewpoint": letters[action.upper()], "ranked": ranked,
                               "thought": thought}}
        if action.lower() == "stop":
            return {"choice": {"kind": "stop", "ranked": ranked, "thought": thought}}
        if action.lower() == "backtrack":
            target = self._place(value.get("place"), history) or backtrack_target(history)
            if target is not None:
                return {"choice": {"kind": "backtrack", "target": target, "ranked": ranked, "thought": thought}}
        ctx.log(fallback=action or "no action")
        visited = set(history["trajectory"])
        fresh = [vp for vp in ranked if vp not in visited] or ranked
        if not fresh:
            return {"choice": {"kind": "stop", "ranked": ranked, "thought": thought}}
        return {"choice": {"kind": "move", "viewpoint": fresh[0], "ranked": ranked, "thought": thought}}

    @staticmethod
    def _place(number, history: dict) -> str | None:
        try:
            vp = history["places"][int(number)]
        except (TypeError, ValueError, IndexError):
            return None
        return vp if vp in history["trajectory"][:-1] else None


# -- thought fusion -----------------------------------------------------------------------

FUSION_PORTS = dict(
    inputs={"progress": "Progress", "choice": "Choice", "history": "NavHistory"},
    outputs={"decision": {"type": "Decision", "doc": "{kind, viewpoint | target, ranked, thought, fused: why}"}},
)


def conflict(progress: dict, choice: dict) -> str | None:
    if progress["done"] and choice["kind"] != "stop":
        return "the estimate says the instruction is done, the choice moves on"
    if not progress["done"] and choice["kind"] == "stop":
        return "the choice stops, the estimate says the instruction is not done"
    return None


def continued(choice: dict, history: dict) -> dict:
    """The choice turned into a move: the best-ranked unvisited waypoint (else the best), or a stop."""
    visited = set(history["trajectory"])
    ranked = choice.get("ranked") or []
    pick = next((vp for vp in ranked if vp not in visited), ranked[0] if ranked else None)
    return {"kind": "move", "viewpoint": pick} if pick else {"kind": "stop"}


def fused(choice: dict, progress: dict, decision: dict, why: str) -> dict:
    thought = f"progress: {progress['thought']}; choice: {choice.get('thought', '')}"
    return dict({k: v for k, v in choice.items() if k not in ("kind", "viewpoint", "target")}, **decision,
                thought=thought, fused=why)


@node_type("smartway.RuleFusion", **FUSION_PORTS, role="fusion",
           config_schema={"type": "object", "additionalProperties": False, "properties": {
               "trust": {"enum": ["progress", "choice"], "default": "progress",
                         "description": "which thought wins when they disagree about stopping"}}},
           doc="Fuses the completion estimate and the waypoint choice into one decision; when they disagree "
               "about stopping, the configured side wins.")
class RuleFusion(Node):
    """Agreement passes the choice on. When the estimate says done but the choice moves
    (or backtracks), or the choice stops but the estimate says not done, `trust` decides:
    'progress' stops in the first case and, in the second, moves to the choice's
    best-ranked unvisited waypoint (the best-ranked when all are visited; stop when none);
    'choice' keeps the choice. The decision's thought joins both thoughts; `fused`
    says what was resolved ('agreed' when nothing)."""

    def step(self, inputs, ctx):
        progress, choice = inputs["progress"], inputs["choice"]
        why = conflict(progress, choice)
        if why is None or self.config["trust"] == "choice":
            keep = {k: choice[k] for k in ("kind", "viewpoint", "target") if k in choice}
            return {"decision": fused(choice, progress, keep, why or "agreed")}
        if progress["done"]:
            return {"decision": fused(choice, progress, {"kind": "stop"}, why)}
        return {"decision": fused(choice, progress, continued(choice, inputs["history"]), why)}


@node_type("smartway.LLMFusion", **FUSION_PORTS, role="fusion", uses_model=True, config_schema=PROMPTED_SCHEMA,
           doc="Fuses the completion estimate and the waypoint choice; only when they disagree about stopping "
               "it asks the pinned model to settle it.")
class LLMFusion(Prompted, Node):
    """Agreement passes the choice on without a call. On a disagreement about stopping it
    renders `user_template` with {{progress}} and {{choice}} (each thought, and what it
    concludes), {{conflict}} and {{history}}, and reads {"decision": "stop" | "continue",
    "thought": "..."}: 'stop' stops, 'continue' keeps the choice when it moves (or
    backtracks) and otherwise moves to the best-ranked unvisited waypoint. Anything else
    keeps the choice (logged as `unparsed`). No retry. A graph without a pinned
    model_profile, or a missing prompt file, is a node error."""

    def step(self, inputs, ctx):
        progress, choice, history = inputs["progress"], inputs["choice"], inputs["history"]
        why = conflict(progress, choice)
        keep = {k: choice[k] for k in ("kind", "viewpoint", "target") if k in choice}
        if why is None:
            return {"decision": fused(choice, progress, keep, "agreed")}
        value, _ = self.ask(ctx, {
            "progress": f"{progress['thought']} (done: {'yes' if progress['done'] else 'no'})",
            "choice": f"{choice.get('thought', '')} (chose: {choice['kind']})", "conflict": why,
            "history": history["text"]})
        verdict = str((value or {}).get("decision") or "").lower()
        if verdict == "stop":
            return {"decision": fused(choice, progress, {"kind": "stop"}, why)}
        if verdict == "continue":
            return {"decision": fused(choice, progress, keep if choice["kind"] != "stop" else continued(choice, history),
                                      why)}
        return {"decision": fused(choice, progress, keep, f"{why} (kept the choice)")}


"""Acting on a subgoal: the low-level executor (openpi-shaped policy), the
replanning policy (how much of a chunk to commit to), and the stop gate (when
to declare `done`)."""

from __future__ import annotations

from executors.babyai import world as W
from executors.babyai.mission import MissionParseError, parse_subgoal
from executors.babyai.policy import connect_policy, decode_actions, make_request
from harness.canvas.registry import Node, node_type

EMPTY_CONFIG = {"type": "object", "properties": {}, "additionalProperties": False}


@node_type(
    "babyai.SubgoalExecutor",
    inputs={"subgoal": "Text", "observation": "Observation", "map": "Map", "pose": "Pose", "carrying": "Carrying"},
    outputs={"plan": {"type": "ActionChunk", "doc": "actions towards the subgoal (only when a plan exists)"},
             "completes": {"type": "Bool", "doc": "the plan's last action achieves the subgoal"},
             "explore": {"type": "Bool", "doc": "emitted (True) when the target is not known/reachable"}},
    config_schema={"type": "object", "properties": {
        "backend": {"enum": ["local", "websocket"], "default": "local",
                    "description": "local SubgoalPolicy, or an openpi WebsocketClientPolicy"},
        "host": {"type": "string", "default": "127.0.0.1"},
        "port": {"type": ["integer", "null"], "default": None},
        "max_actions": {"type": ["integer", "null"], "minimum": 1, "default": None,
                        "description": "chunk length k the local policy returns at most"}},
        "additionalProperties": False},
    role="executor",
    doc="Text subgoal -> action chunk via an openpi-shaped policy: shortest known path, then interact.",
)
class SubgoalExecutor(Node):
    """Sends the subgoal, the current view, the map, the pose and what is carried to an
    openpi-shaped policy (`backend: local` plans with the BabyAI subgoal solver on the known
    map; `websocket` asks a remote WebsocketClientPolicy). A non-empty action chunk is
    emitted on `plan` with `completes` (the chunk's last action achieves the subgoal). When
    the target is unknown or unreachable (empty chunk), only `explore` (True) is emitted."""

    def setup(self):
        self.policy = None

    def reset(self, ctx):
        if self.policy is None:  # connect lazily: a websocket client connects on construction
            self.policy = connect_policy(self.config)

    def step(self, inputs, ctx):
        request = make_request(inputs["subgoal"], inputs["observation"]["image"], inputs["map"],
                               inputs["pose"], inputs["carrying"] or None)
        response = self.policy.infer(request)
        actions = decode_actions(response)
        status = response.get("status", "complete" if actions else "explore")
        ctx.log(status=status, k=len(actions))
        if not actions:
            return {"explore": True}
        return {"plan": actions, "completes": status == "complete"}

    def close(self):
        ws = getattr(self.policy, "_ws", None)
        if ws is not None:
            ws.close()


REPLAN_PORTS = dict(
    inputs={"plan": {"type": "ActionChunk", "required": False},
            "completes": {"type": "Bool", "required": False},
            "exploration": {"type": "ActionChunk", "required": False}},
    outputs={"chunk": "ActionChunk", "completes": "Bool"},
)


class _Replan(Node):
    def horizons(self):
        return None, None

    def step(self, inputs, ctx):
        plan_h, explore_h = self.horizons()
        if inputs.get("plan"):
            chunk, completes, horizon = list(inputs["plan"]), bool(inputs.get("completes")), plan_h
        elif inputs.get("exploration"):
            chunk, completes, horizon = list(inputs["exploration"]), False, explore_h
        else:
            return {"chunk": [self.config.get("idle_action", "left")], "completes": False}
        if horizon and len(chunk) > horizon:
            chunk, completes = chunk[:horizon], False
        return {"chunk": chunk, "completes": completes}


IDLE = {"idle_action": {"enum": ["left", "right", "forward"], "default": "left",
                        "description": "what to do when neither a plan nor an exploration chunk arrived"}}


@node_type("babyai.ExecuteWholeChunk", **REPLAN_PORTS, role="replanning",
           config_schema={"type": "object", "properties": dict(IDLE), "additionalProperties": False},
           doc="Commits to the whole plan / exploration chunk before observing again.")
class ExecuteWholeChunk(_Replan):
    """Forwards the whole plan chunk (with its `completes` flag) when one arrived this
    tick, else the whole exploration chunk (`completes` false). When neither arrived, emits
    `[idle_action]` (default `left`) with `completes` false."""


@node_type("babyai.ReplanHorizon", **REPLAN_PORTS, role="replanning",
           config_schema={"type": "object", "properties": {
               **IDLE,
               "horizon": {"type": "integer", "minimum": 1, "default": 1,
                           "description": "plan actions executed before replanning (1 = every step)"},
               "explore_horizon": {"type": "integer", "minimum": 1, "default": 1,
                                   "description": "exploration actions executed before replanning"}},
               "additionalProperties": False},
           doc="Executes only the first `horizon` actions of a chunk, then observes and replans.")
class ReplanHorizon(_Replan):
    """Like ExecuteWholeChunk, but cuts a plan chunk to its first `horizon` actions and an
    exploration chunk to its first `explore_horizon` actions; a cut chunk has `completes`
    false. When neither arrived, emits `[idle_action]` (default `left`)."""

    def horizons(self):
        return self.config["horizon"], self.config["explore_horizon"]


STOP_INPUTS = {"chunk": "ActionChunk", "completes": "Bool",
               "subgoal": {"type": "Text", "required": False},
               "observation": {"type": "Observation", "required": False},
               "carrying": {"type": "Carrying", "required": False}}


@node_type("babyai.TrustPlanStop", inputs=STOP_INPUTS,
           outputs={"actions": "ActionChunk"}, config_schema=EMPTY_CONFIG, role="stop",
           doc="Appends `done` to a chunk whose plan claims to complete the subgoal (no check).")
class TrustPlanStop(Node):
    """Forwards the chunk and appends `done` whenever `completes` is true, without
    checking the world."""

    def step(self, inputs, ctx):
        chunk = list(inputs["chunk"])
        return {"actions": chunk + ["done"] if inputs["completes"] else chunk}


@node_type("babyai.VerifyStop",
           inputs=STOP_INPUTS,
           outputs={"actions": "ActionChunk"}, config_schema=EMPTY_CONFIG, role="stop",
           doc="Executes a completing chunk, then declares `done` only if the new view shows the subgoal met "
               "(needs subgoal, observation and carrying wired).")
class VerifyStop(Node):
    """Forwards a completing chunk without `done` and remembers the subgoal; on the next
    firing for the same subgoal, emits only `done` if the current view (the cell in front,
    what is carried; for `put`, a cell next to the front one) shows the subgoal met.
    Otherwise it forwards the new chunk. Without `subgoal` and `observation` wired it never
    declares `done`; an unparseable subgoal counts as not met."""

    def reset(self, ctx):
        self.claimed = None

    def step(self, inputs, ctx):
        subgoal, observation = inputs.get("subgoal"), inputs.get("observation")
        if (self.claimed and self.claimed == subgoal and observation is not None
                and subgoal_met(subgoal, observation["image"], inputs.get("carrying") or {})):
            self.claimed = None
            return {"actions": ["done"]}
        self.claimed = subgoal if inputs["completes"] else None
        return {"actions": list(inputs["chunk"])}


def subgoal_met(subgoal: str, image, carrying: dict) -> bool:
    """Judged from the current egocentric view (what the verifier checks, as far as it is visible)."""
    try:
        goal = parse_subgoal(subgoal)
    except MissionParseError:
        return False
    front = image[3][5]
    verb, obj = goal["verb"], goal["obj"]
    if verb == "goto":
        return W.matches(front, obj)
    if verb == "pickup":
        return bool(carrying) and W.matches(W.object_code(carrying), obj)
    if verb == "open":
        return W.matches(front, {**obj, "type": "door"}) and int(front[2]) == W.OPEN
    if verb == "put":
        if not W.matches(front, goal["obj"]) or (carrying and W.matches(W.object_code(carrying), obj)):
            return False
        return any(W.matches(image[i][j], goal["target"]) for i, j in ((2, 5), (4, 5), (3, 4)))
    return False

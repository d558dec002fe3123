"""Mission parsing into text subgoals, and the subgoal planner."""

from __future__ import annotations

from executors.babyai import world as W
from executors.babyai.mission import MissionParseError, mission_groups, parse_subgoal, split_mission
from harness.canvas.registry import Node, node_type

EMPTY_CONFIG = {"type": "object", "properties": {}, "additionalProperties": False}


@node_type("babyai.MissionParser", inputs={"mission": "Text"},
           outputs={"subgoals": {"type": "List[Text]", "doc": "leaf instructions in execution order"}},
           config_schema=EMPTY_CONFIG, role="mission",
           doc="BabyAI grammar: ', then' / 'then' keep order, 'after you' swaps it, 'and' splits.")
class MissionParser(Node):
    """Parses the mission with the BabyAI grammar into an ordered subgoal list: ', then' /
    'then' keep the written order, 'after you' swaps the two parts, 'and' splits into parts.
    Parsed once per mission."""

    def reset(self, ctx):
        self._mission, self._subgoals = None, []

    def step(self, inputs, ctx):
        if inputs["mission"] != self._mission:
            self._mission = inputs["mission"]
            self._subgoals = split_mission(self._mission)
        return {"subgoals": list(self._subgoals)}


@node_type("babyai.ThenOnlyParser", inputs={"mission": "Text"},
           outputs={"subgoals": {"type": "List[Text]", "doc": "leaf instructions in written order"}},
           config_schema=EMPTY_CONFIG, role="mission",
           doc="Splits on 'then' and 'and' / 'after you' in written order (ignores the reversal of 'after you').")
class ThenOnlyParser(Node):
    """Splits the mission on 'then', 'and' and 'after you' in written order; it does not
    reverse the parts of 'after you'."""

    def step(self, inputs, ctx):
        text = inputs["mission"].replace(" after you ", " and ")
        return {"subgoals": split_mission(text)}


PLANNER_PORTS = dict(
    inputs={"subgoals": "List[Text]", "feedback": "Feedback",
            "mission": {"type": "Text", "required": False, "doc": "to tell which parts may run in any order"},
            "map": {"type": "Map", "required": False}},
    outputs={"subgoal": {"type": "Text", "doc": "the subgoal to work on now"},
             "index": {"type": "Int", "doc": "its position in the list"}},
)


@node_type("babyai.SequentialSubgoals", **PLANNER_PORTS, config_schema=EMPTY_CONFIG, role="planner",
           doc="Works through the subgoals in list order; advances after each executed `done`.")
class SequentialSubgoals(Node):
    """Emits the subgoal at the current index and the index; the index advances by one for
    each `done` among the actions executed last tick. After the last subgoal only `index`
    is emitted (no subgoal)."""

    def reset(self, ctx):
        self.index = 0

    def step(self, inputs, ctx):
        actions = inputs["feedback"].get("actions") or []
        self.index += sum(1 for a in actions if a == "done")
        subgoals = inputs["subgoals"]
        if self.index >= len(subgoals):
            return {"index": self.index}
        return {"subgoal": subgoals[self.index], "index": self.index}


@node_type("babyai.KnownTargetFirst", **PLANNER_PORTS, config_schema=EMPTY_CONFIG, role="planner",
           doc="Within a stage of 'and'-joined parts, works first on a part whose object is already on the map; "
               "stages in order; advances after each executed `done`.")
class KnownTargetFirst(Node):
    """Groups the subgoals into stages (parts joined by 'and' form one stage; stages keep
    their order). Within the current stage it works on a part whose object (and, for
    `put`, its target) is already on the map, else on the first open part; an executed
    `done` finishes the current part. After the last stage only `index` is emitted."""

    def reset(self, ctx):
        self.finished: set[int] = set()
        self.current: int | None = None
        self.stages: list[list[int]] | None = None

    def step(self, inputs, ctx):
        subgoals = inputs["subgoals"]
        if self.stages is None:
            self.stages = _stages(inputs.get("mission"), subgoals)
        if self.current is not None and "done" in (inputs["feedback"].get("actions") or []):
            self.finished.add(self.current)
            self.current = None
        pending = next((stage for stage in self.stages if any(i not in self.finished for i in stage)), None)
        if pending is None:
            return {"index": len(subgoals)}
        open_parts = [i for i in pending if i not in self.finished]
        grid = inputs.get("map")
        known = [i for i in open_parts if grid is not None and _target_known(subgoals[i], grid)]
        if self.current not in open_parts or (self.current not in known and known):
            self.current = known[0] if known else open_parts[0]
        return {"subgoal": subgoals[self.current], "index": self.current}


def _stages(mission: str | None, subgoals: list[str]) -> list[list[int]]:
    """Indices of `subgoals` grouped by stage; one stage per subgoal without a mission."""
    if mission:
        try:
            groups = mission_groups(mission)
        except MissionParseError:
            groups = []
        if [s for g in groups for s in g] == list(subgoals):
            stages, k = [], 0
            for group in groups:
                stages.append(list(range(k, k + len(group))))
                k += len(group)
            return stages
    return [[i] for i in range(len(subgoals))]


def _target_known(subgoal: str, grid) -> bool:
    try:
        goal = parse_subgoal(subgoal)
    except MissionParseError:
        return False
    if not W.find_objects(grid, goal["obj"]):
        return False
    return goal["verb"] != "put" or bool(W.find_objects(grid, goal["target"]))

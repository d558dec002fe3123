"""`mapgpt.Simulator`: an R2R episode on a MatterSim-compatible simulator, as a graph node."""

from __future__ import annotations

from executors.mp3d import data_r2r as D
from executors.mp3d.metrics import score_trajectory
from executors.mp3d.walker import Walker, config_schema
from harness.canvas.registry import SimulatorNode, node_type

MAX_ACTIONS = 15   # decisions per episode (MapGPT's --max_action_len)
STOP = "stop"


@node_type(
    "mapgpt.Simulator",
    inputs={"actions": {"type": "ActionChunk",
                        "doc": "MatterSim actions [index, heading, elevation] executed in order, or 'stop'"}},
    outputs={
        "instruction": {"type": "Text", "doc": "the R2R instruction"},
        "state": {"type": "NavState", "doc": "{scan, viewpoint, heading, elevation, view_index, decisions, "
                                             "navigable: [viewpoint ids in the current view]}"},
        "panorama": {"type": "Panorama", "doc": "{viewpoint, views: 36 x {view_index, heading, elevation, "
                                                "navigable, caption, objects[, image]}}"},
        "feedback": {"type": "Feedback",
                     "doc": "{executed: the actions run in the previous tick, moved_to: the viewpoint after them, "
                            "stopped}. It reports the previous tick: the actions sent at tick t run when tick t ends, "
                            "and nodes read what they did at tick t + 1 (at tick 0: executed empty)"},
        "reference_path": {"type": "List[Text]", "privileged": True, "doc": "the R2R reference path (scoring only)"},
    },
    config_schema=config_schema("reference_path"),
    doc="An R2R instruction on the Matterport3D graph: discretised views, MatterSim actions, "
        f"at most {MAX_ACTIONS} move-or-stop decisions; metrics are R2R's.",
)
class Simulator(SimulatorNode):
    """One R2R episode per reset: the agent starts at the path's first viewpoint and heading.
    Each action is executed in order: 'stop' ends the episode; `[index, heading,
    elevation]` is passed to MatterSim's makeAction. Moves (index > 0) and the stop count
    as decisions; turns and tilts do not. The episode ends on stop or after 15 decisions;
    actions after that in the same chunk are not executed. A tick with no actions changes
    nothing. Each tick it emits the instruction, the state (with the decision count), the
    36-view panorama of the current viewpoint (cached per viewpoint) with captions and
    detected objects, and feedback on what ran. Image mode needs the real MatterSim with
    rendering and raises otherwise. The result has R2R's metrics and how the episode
    ended ('stopped', 'max_actions' or 'cut_short')."""

    def setup(self) -> None:
        self.data = D.dataset()
        self.walker = Walker(self.data, backend=self.config["backend"],
                             image_mode=self.config["observation"] == "image",
                             dataset_path=self.config.get("dataset_path"))

    @property
    def sim(self):
        return self.walker.sim

    @property
    def trajectory(self) -> list:
        return self.walker.trajectory

    def reset_episode(self, episode: dict, ctx) -> dict:
        item = self.data.episode(episode["split"], episode["instr_id"])
        self.walker.start(item["scan"], item["path"][0], item["heading"])
        self.item = item
        self.graph = self.data.graph(item["scan"])
        self.decisions = 0
        self.stopped = False
        self._executed: list = []
        self._tick = None
        return self._outputs()

    def step(self, inputs: dict, ctx) -> dict:
        tick = getattr(ctx, "tick", None)
        if tick != self._tick:
            self._executed, self._tick = [], tick
        actions = inputs.get("actions")
        if actions is None:
            return self._outputs()
        if isinstance(actions, str) or (isinstance(actions, (list, tuple)) and actions
                                        and not isinstance(actions[0], (list, tuple, str))):
            actions = [actions]
        for action in actions:
            if self.done():
                break
            self._execute(action)
        return self._outputs()

    def _execute(self, action) -> None:
        if action == STOP:
            self.stopped = True
            self.decisions += 1
            self._executed.append(STOP)
            return
        index, heading, elevation = (float(v) for v in action)
        self.walker.act(int(index), heading, elevation)
        self._executed.append([int(index), heading, elevation])
        if int(index) > 0:
            self.decisions += 1

    def done(self) -> bool:
        return self.stopped or self.decisions >= MAX_ACTIONS

    def result(self) -> dict:
        scores = score_trajectory(self.graph, self.trajectory, self.item["path"])
        return {**scores, "success": bool(scores["success"]), "reward": scores["spl"],
                "decisions": self.decisions, "stopped": self.stopped,
                "ended": "stopped" if self.stopped else ("max_actions" if self.decisions >= MAX_ACTIONS
                                                        else "cut_short"),
                "instr_id": self.item["instr_id"], "scan": self.item["scan"], "instruction": self.item["instruction"],
                "trajectory": self.trajectory, **self.walker.provenance()}

    def close(self) -> None:
        self.walker.close()

    def _outputs(self) -> dict:
        state = self.sim.getState()[0]
        vp = state.location.viewpointId
        out = {
            "instruction": self.item["instruction"],
            "state": {"scan": state.scanId, "viewpoint": vp, "heading": state.heading,
                      "elevation": state.elevation, "view_index": state.viewIndex, "decisions": self.decisions,
                      "navigable": [loc.viewpointId for loc in state.navigableLocations[1:]]},
            "panorama": {"viewpoint": vp, "views": self.walker.panorama(vp)},
            "feedback": {"executed": list(self._executed), "moved_to": vp, "stopped": self.stopped},
        }
        if self.config.get("privileged_outputs"):
            out["reference_path"] = list(self.item["path"])
        return out


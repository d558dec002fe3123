"""`mapgpt.Simulator`: an R2R episode on a MatterSim-compatible simulator, as a graph node."""

from __future__ import annotations

from executors.mapgpt import data as D
from executors.mapgpt.metrics import score_trajectory
from executors.mapgpt.panorama import sweep
from executors.mapgpt.sim import backend_name, new_simulator
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
        "feedback": {"type": "Feedback", "doc": "{executed: actions run this tick, moved_to, stopped}"},
        "reference_path": {"type": "List[Text]", "privileged": True, "doc": "the R2R reference path (scoring only)"},
    },
    config_schema={
        "type": "object",
        "properties": {
            "backend": {"enum": ["auto", "graph", "mattersim"], "default": "auto",
                        "description": "auto: the real MatterSim when importable, else the graph backend"},
            "observation": {"enum": ["text", "image"], "default": "text",
                            "description": "image: keep each view's RGB (real MatterSim with rendering only)"},
            "dataset_path": {"type": ["string", "null"], "default": None,
                             "description": "Matterport3D scans folder for image mode (MatterSim's setDatasetPath)"},
            "privileged_outputs": {"type": "boolean", "default": False,
                                   "description": "emit reference_path (scoring, debugging)"},
        },
        "additionalProperties": False,
    },
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
        image_mode = self.config["observation"] == "image"
        self.data = D.dataset()
        self.sim = None
        self.sweeper = None
        self._panoramas: dict[tuple[str, str], list] = {}
        self._image_mode = image_mode

    def _simulators(self):
        if self.sim is None:
            D.require(["connectivity/scans.txt"], self.data.root)
            kwargs = {"backend": self.config["backend"]}
            if self._image_mode:
                if self.config["backend"] == "graph":
                    raise ValueError("observation 'image' needs the real MatterSim (backend mattersim); "
                                     "the graph backend renders nothing")
                kwargs.update(rendering=True, dataset_path=self.config.get("dataset_path"))
            self.sim = new_simulator(self.data.connectivity, backend=self.config["backend"])
            self.sweeper = new_simulator(self.data.connectivity, **kwargs)
            if self._image_mode and backend_name(self.sweeper) == "graph":
                raise ValueError("observation 'image' needs the real MatterSim; it is not importable here")
        return self.sim

    def reset_episode(self, episode: dict, ctx) -> dict:
        item = self.data.episode(episode["split"], episode["instr_id"])
        D.require(D.scan_files(item["scan"]), self.data.root)
        sim = self._simulators()
        self.item = item
        self.graph = self.data.graph(item["scan"])
        self.captions = self.data.captions(item["scan"])
        sim.newEpisode([item["scan"]], [item["path"][0]], [item["heading"]], [0.0])
        state = sim.getState()[0]
        self.trajectory = [[state.location.viewpointId, state.heading, state.elevation]]
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
        self.sim.makeAction([int(index)], [heading], [elevation])
        state = self.sim.getState()[0]
        self.trajectory.append([state.location.viewpointId, state.heading, state.elevation])
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
                "instr_id": self.item["instr_id"], "scan": self.item["scan"],
                "trajectory": self.trajectory, **provenance_fields(self.sim)}

    def close(self) -> None:
        self.sim = self.sweeper = None

    def _panorama(self, viewpoint: str) -> list:
        key = (self.item["scan"], viewpoint)
        views = self._panoramas.get(key)
        if views is None:
            views = sweep(self.sweeper, self.item["scan"], viewpoint, self.captions, keep_images=self._image_mode)
            if len(self._panoramas) > 4096:
                self._panoramas.clear()
            self._panoramas[key] = views
        return views

    def _outputs(self) -> dict:
        state = self.sim.getState()[0]
        vp = state.location.viewpointId
        out = {
            "instruction": self.item["instruction"],
            "state": {"scan": state.scanId, "viewpoint": vp, "heading": state.heading,
                      "elevation": state.elevation, "view_index": state.viewIndex, "decisions": self.decisions,
                      "navigable": [loc.viewpointId for loc in state.navigableLocations[1:]]},
            "panorama": {"viewpoint": vp, "views": self._panorama(vp)},
            "feedback": {"executed": list(self._executed), "moved_to": vp, "stopped": self.stopped},
        }
        if self.config.get("privileged_outputs"):
            out["reference_path"] = list(self.item["path"])
        return out


def provenance_fields(sim) -> dict:
    """Which simulator backend and which data (manifest digest) produced a result."""
    return {"backend": backend_name(sim) if sim is not None else None, "data_sha256": D.manifest_digest()}

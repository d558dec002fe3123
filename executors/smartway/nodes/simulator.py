"""`smartway.Simulator`: an R2R instruction on the Matterport3D graph with waypoint
actions — the navigable neighbours stand in for SmartWay's predicted waypoints."""

from __future__ import annotations

from executors.mp3d.metrics import score_trajectory
from executors.mp3d.walker import config_schema
from executors.mp3d.waypoints import ACTIONS_PORT, BODY_OUTPUTS, WaypointSimulator
from harness.canvas.registry import node_type


@node_type(
    "smartway.Simulator",
    inputs={"actions": ACTIONS_PORT},
    outputs={"instruction": {"type": "Text", "doc": "the R2R instruction"}, **BODY_OUTPUTS,
             "reference_path": {"type": "List[Text]", "privileged": True,
                                "doc": "the R2R reference path (scoring only)"}},
    config_schema=config_schema("reference_path"),
    doc="An R2R instruction on the Matterport3D graph (a discrete-graph port of SmartWay's VLN-CE setting, "
        "not VLN-CE): each action moves to a navigable neighbour (the waypoints) or stops; success needs the "
        "explicit stop within 3 m of the goal.",
)
class Simulator(WaypointSimulator):
    """One R2R instruction per reset (episode keys split, instr_id): the agent starts at
    the path's first viewpoint with R2R's heading. Each action is executed in order:
    'stop' ends the episode; a viewpoint id moves there if it is a navigable neighbour
    of the current viewpoint (the walker turns until the neighbour's nearest-centre view
    is current, then moves), anything else raises (a node error). Each move and the
    stop count as one step, so the runtime's step cap (the profile's `max_steps`) ends
    an episode that never stops; the simulator has no cap of its own. Each tick it emits
    the instruction, the state (position, heading, moves so far), the 36-view panorama
    of the current viewpoint (cached per viewpoint) with captions and detected objects,
    and feedback. Image mode needs the real MatterSim with rendering and raises
    otherwise. The result has R2R's metrics (`executors.mp3d.metrics`) with explicit
    stop: an episode that ended without 'stop' fails whatever its distance to the goal;
    also moves, whether it stopped, the trajectory, the backend and the data digest."""

    def reset_episode(self, episode: dict, ctx) -> dict:
        self.item = self.data.episode(episode["split"], episode["instr_id"])
        self.begin(self.item["scan"], self.item["path"][0], self.item["heading"])
        return self.outputs()

    def result(self) -> dict:
        scores = score_trajectory(self.graph, self.walker.trajectory, self.item["path"], stopped=self.stopped)
        return {**scores, "success": bool(scores["success"]), "reward": scores["spl"], "moves": self.moves,
                "stopped": self.stopped, "ended": "stopped" if self.stopped else "not_stopped",
                "instr_id": self.item["instr_id"], "scan": self.item["scan"],
                "trajectory": self.walker.trajectory, **self.walker.provenance()}

    def outputs(self) -> dict:
        out = {"instruction": self.item["instruction"], **super().outputs()}
        if self.config.get("privileged_outputs"):
            out["reference_path"] = list(self.item["path"])
        return out

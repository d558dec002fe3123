"""The body shared by simulators whose actions are waypoints: the navigable neighbours of
the current viewpoint (moved to as the walker does) or 'stop'. Subclasses register the
node type, start an episode with `begin` and add their own outputs and results."""

from __future__ import annotations

from executors.mp3d import data_r2r as D
from executors.mp3d.metrics import viewpoint_path
from executors.mp3d.walker import Walker
from harness.canvas.registry import SimulatorNode

STOP = "stop"
ACTIONS_PORT = {"type": "ActionChunk",
                "doc": "navigable neighbours of the current viewpoint to move to, in order, or 'stop'"}
BODY_OUTPUTS = {
    "state": {"type": "NavState", "doc": "{scan, viewpoint, position [x, y, z], heading, elevation, view_index, "
                                         "moves}"},
    "panorama": {"type": "Panorama", "doc": "{viewpoint, views: 36 x {view_index, heading, elevation, "
                                            "navigable, caption, objects[, image]}}"},
    "feedback": {"type": "Feedback",
                 "doc": "{executed: the actions run in the previous tick, moved_to: the viewpoint after them, "
                        "stopped}. It reports the previous tick: the actions sent at tick t run when tick t ends, "
                        "and nodes read what they did at tick t + 1 (at tick 0: executed empty)"},
}


class WaypointSimulator(SimulatorNode):
    def setup(self) -> None:
        self.data = D.dataset()
        self.walker = Walker(self.data, backend=self.config["backend"],
                             image_mode=self.config["observation"] == "image",
                             dataset_path=self.config.get("dataset_path"))

    def begin(self, scan: str, viewpoint: str, heading: float) -> None:
        self.walker.start(scan, viewpoint, heading)
        self.graph = self.data.graph(scan)
        self.moves = 0
        self.stopped = False
        self._executed: list = []
        self._tick = None

    def on_tick(self, inputs: dict) -> None:
        """Called with the tick's inputs before its first action (subclasses read other ports)."""

    def step(self, inputs: dict, ctx) -> dict:
        tick = getattr(ctx, "tick", None)
        if tick != self._tick:
            self._executed, self._tick = [], tick
            self.on_tick(inputs)
        actions = inputs.get("actions")
        if isinstance(actions, str):
            actions = [actions]
        for action in actions or []:
            if self.done():
                break
            if action == STOP:
                self.stopped = True
            else:
                self.walker.move_to(str(action))
                self.moves += 1
            self._executed.append(action)
        return self.outputs()

    def done(self) -> bool:
        return self.stopped

    def close(self) -> None:
        self.walker.close()

    def path_length(self) -> float:
        """Metres along the graph between the trajectory's viewpoints."""
        path = viewpoint_path(self.walker.trajectory)
        return float(sum(self.graph.distance(a, b) for a, b in zip(path[:-1], path[1:])))

    def outputs(self) -> dict:
        state = self.walker.state
        vp = state.location.viewpointId
        return {
            "state": {"scan": state.scanId, "viewpoint": vp, "position": list(self.graph.position(vp)),
                      "heading": state.heading, "elevation": state.elevation, "view_index": state.viewIndex,
                      "moves": self.moves},
            "panorama": {"viewpoint": vp, "views": self.walker.panorama(vp)},
            "feedback": {"executed": list(self._executed), "moved_to": vp, "stopped": self.stopped},
        }

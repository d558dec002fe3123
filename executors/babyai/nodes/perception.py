"""Perception (7x7 view -> egocentric cells) and pose tracking (agent start frame)."""

from __future__ import annotations

from executors.babyai import world as W
from harness.canvas.registry import Node, node_type

CELL_DOC = "{'fwd': cells ahead, 'right': cells to the right, 'code': (type, colour, state) indices}"


@node_type(
    "babyai.Perception",
    inputs={"observation": "Observation"},
    outputs={"cells": {"type": "List[Cell]", "doc": CELL_DOC},
             "carrying": {"type": "Carrying", "doc": "{'type', 'color'} of the carried object, or {}"}},
    config_schema={"type": "object", "properties": {
        "max_range": {"type": "integer", "minimum": 1, "maximum": 6, "default": 6,
                      "description": "ignore cells farther ahead than this"}},
        "additionalProperties": False},
    role="perception",
    doc="The visible cells of the 7x7 view in egocentric coordinates, and what the agent carries.",
)
class Perception(Node):
    """Lists the visible cells of the 7x7 view in egocentric coordinates (the agent's own
    cell and unseen cells left out), up to `max_range`, and what the agent carries (`{}`
    when nothing)."""

    def step(self, inputs, ctx):
        image = inputs["observation"]["image"]
        max_range = self.config["max_range"]
        codes = image.tolist()
        cells = []
        for i in range(W.VIEW):
            column = codes[i]
            for j in range(W.VIEW - 1 - max_range, W.VIEW):
                if (i, j) == W.AGENT_VIEW_CELL or column[j][0] == W.UNSEEN:
                    continue
                cells.append({"fwd": W.VIEW - 1 - j, "right": i - 3, "code": tuple(column[j])})
        carried = W.cell_dict(image[W.AGENT_VIEW_CELL])
        carrying = {} if carried is None or carried["type"] == "empty" else carried
        return {"cells": cells, "carrying": carrying}


class _PoseBase(Node):
    use_bumps = True

    def reset(self, ctx):
        self.pose = W.start_pose()

    def step(self, inputs, ctx):
        feedback = inputs["feedback"]
        blocked = feedback.get("blocked") or []
        for k, action in enumerate(feedback.get("actions") or []):
            d = self.pose["dir"]
            if action == "left":
                self.pose = {**self.pose, "dir": (d - 1) % 4}
            elif action == "right":
                self.pose = {**self.pose, "dir": (d + 1) % 4}
            elif action == "forward" and not (self.use_bumps and k < len(blocked) and blocked[k]):
                x, y = W.front_of(self.pose["x"], self.pose["y"], d)
                self.pose = {"x": x, "y": y, "dir": d}
        return {"pose": dict(self.pose)}


@node_type(
    "babyai.DeadReckoning",
    inputs={"feedback": "Feedback"},
    outputs={"pose": {"type": "Pose", "doc": "{'x', 'y', 'dir'} in the agent's start frame (map indices)"}},
    config_schema={"type": "object", "properties": {}, "additionalProperties": False},
    role="pose",
    doc="Integrates executed actions; a forward that bumped (blocked) does not move.",
)
class DeadReckoning(_PoseBase):
    """Integrates the actions executed last tick into a pose in the start frame: turns
    change the heading; a forward moves one cell unless the simulator reported it bumped."""

    use_bumps = True


@node_type(
    "babyai.OpenLoopPose",
    inputs={"feedback": "Feedback"},
    outputs={"pose": {"type": "Pose", "doc": "{'x', 'y', 'dir'} in the agent's start frame (map indices)"}},
    config_schema={"type": "object", "properties": {}, "additionalProperties": False},
    role="pose",
    doc="Integrates commanded actions, assuming every forward moved (no bump sensor).",
)
class OpenLoopPose(_PoseBase):
    """Integrates the commanded actions into a pose in the start frame, assuming every
    forward moved (bumps are ignored, so the pose drifts when the agent walks into walls)."""

    use_bumps = False

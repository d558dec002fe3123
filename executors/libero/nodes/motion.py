"""The motion half of VoxPoser's chain on LIBERO: `libero.VoxelPlanner` (upstream's
greedy path planner on the value maps) and `libero.VoxelController` (end-effector
delta actions that follow the path and turn the gripper to the rotation map's
orientation)."""

from __future__ import annotations

import numpy as np
from scipy import ndimage
from scipy.spatial.transform import Rotation

from harness.canvas.registry import Node, node_type
from harness.embodied import voxels

_NEIGHBOURS = np.array([(i, j, k) for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1) if (i, j, k) != (0, 0, 0)])


def _command(value: float) -> float:
    """A gripper-map value (1 open, 0 closed) as LIBERO's gripper action (-1 open, +1 close)."""
    return -1.0 if value >= 0.5 else 1.0


@node_type(
    "libero.VoxelPlanner",
    inputs={"motion": {"type": "Motion", "required": False, "doc": "the next motion (from the root LMP)"},
            "gripper": {"type": "Gripper", "doc": "end-effector state"},
            "objects": {"type": "Objects", "required": False, "doc": "the scene (to follow a movable object)"},
            "workspace": {"type": "Workspace", "doc": "the voxel grid's box"}},
    outputs={"waypoints": {"type": "Waypoints",
                           "doc": "{'points': [[x,y,z], ...] for the end effector, 'rotation': [x,y,z,w], "
                                  "'gripper': -1 open / +1 close, 'speed': 0-1}"},
             "progress": {"type": "Any", "doc": "{'motion': id, 'done': bool}"}},
    config_schema={
        "type": "object", "additionalProperties": False,
        "properties": {
            "target_weight": {"type": "number", "minimum": 0, "default": 2.0,
                              "description": "weight of the distance to the target (upstream: 2)"},
            "obstacle_weight": {"type": "number", "minimum": 0, "default": 1.0,
                                "description": "weight of the blurred avoidance map (upstream: 1)"},
            "obstacle_sigma": {"type": "number", "exclusiveMinimum": 0, "default": 0.1,
                               "description": "Gaussian blur of the avoidance map, as a fraction of the voxels per "
                                              "axis (upstream: 10 of 100)"},
            "tolerance_m": {"type": "number", "exclusiveMinimum": 0, "default": 0.01,
                            "description": "a motion is done when the movable is this close to its target "
                                           "(upstream: 1 cm)"},
            "gripper_ticks": {"type": "integer", "minimum": 1, "default": 10,
                              "description": "ticks a motion without an affordance map lasts"},
            "max_ticks_per_motion": {"type": "integer", "minimum": 1, "default": 120},
            "settle_ticks": {"type": "integer", "minimum": 0, "default": 10,
                             "description": "ticks held after the chain's program has returned"},
        },
    },
    role="planning",
    doc="VoxPoser's path planner: per motion, a greedy path over the voxel grid descending the cost "
        "(weighted distance to the affordance map's best voxels + weighted, blurred avoidance map) from the "
        "movable; emits the remaining waypoints with the rotation, gripper and speed maps read along them.",
)
class VoxelPlanner(Node):
    """Plans each arriving motion once, then follows it. With an affordance map: the target
    is the centroid of the map's maximal voxels; the cost of a voxel is `target_weight` x
    its distance to the nearest maximal voxel (normalised to 0-1) + `obstacle_weight` x
    the avoidance map's positive voxels blurred (Gaussian, `obstacle_sigma` x voxels,
    peak 1); the path descends that cost over the 26 neighbouring voxels from the
    movable's voxel while it strictly drops (at most 3 x voxels steps), then the target.
    The movable is the end effector ('gripper' and its aliases) or a scene object: then
    every point is shifted by the end effector's offset from the object, so the object
    travels the path. Along the path it reads, at each point's voxel, the gripper map
    (1 open, 0 closed; a value >= 0.5 opens; without a map the last command holds - open
    at an episode's start; at the last point, when the map is not uniform and its less
    common value lies within 3 voxels, that value), the velocity map (clipped to
    0.05-1; 1 without one) and the rotation map (x, y, z, w at the target voxel;
    without one the end effector's orientation when execute() was called). Each tick it
    drops the points the end effector has reached (within 3 x `tolerance_m`) or that lie
    against the direction to the target, and emits the rest with the command and speed
    of the next one. A motion is done when the movable is within `tolerance_m` of the
    target, a motion without an affordance map (the gripper alone, held in place) after
    `gripper_ticks`, any motion after `max_ticks_per_motion`; `reset_to_default_pose`'s
    motion goes straight to the end effector's pose at the episode's first tick. A done
    motion holds position until the next one arrives. After {'final': true} it holds for
    `settle_ticks`, then emits nothing (the episode then ends for want of actions)."""

    def reset(self, ctx) -> None:
        self.motion: dict | None = None
        self.command = -1.0
        self.home: tuple | None = None
        self.final_ticks: int | None = None
        self.done = False
        self.ticks = 0

    def step(self, inputs: dict, ctx) -> dict:
        gripper = inputs["gripper"]
        eef = np.asarray(gripper["position"], float)
        if self.home is None:
            self.home = (eef.copy(), np.asarray(gripper["quaternion"], float))
        if "motion" in inputs:
            self._start(inputs["motion"], inputs, eef, gripper)
        if self.final_ticks is not None:
            self.final_ticks -= 1
            if self.final_ticks < 0:
                return {}
            return self._hold(eef, gripper)
        if self.motion is None:
            return self._hold(eef, gripper)
        movable = self._movable_position(inputs, eef)
        self.ticks += 1
        if not self.done:
            self.done = self._finished(movable)
        if self.done:
            out = self._hold(eef, gripper)
        else:
            out = self._follow(eef, movable)
        out["progress"] = {"motion": self.motion["id"], "done": self.done}
        return out

    # -- one motion -------------------------------------------------------------
    def _start(self, motion: dict, inputs: dict, eef: np.ndarray, gripper: dict) -> None:
        if motion.get("final"):
            self.final_ticks = self.config["settle_ticks"]
            return
        ws = inputs["workspace"]
        self.motion, self.ticks, self.done = motion, 0, False
        self.rotation = np.asarray(motion.get("quaternion") or gripper["quaternion"], float)
        self.speeds: list[float] = []
        if motion.get("home"):
            self.target, self.rotation = self.home
            self.points, self.commands = [self.target], [self.command]
            self.speeds = [1.0]
            self.offset = np.zeros(3)
            return
        movable = self._movable_position(inputs, eef)
        self.offset = eef - movable
        grid = voxels.Grid(motion["affordance"].shape[0] if "affordance" in motion else 10, ws["min"], ws["max"])
        if "affordance" not in motion:
            self.target = movable
            value = self._gripper_value(motion, grid, grid.to_voxel(eef), last=True)
            self.points = [movable]
            self.commands = [self.command if value is None else _command(value)]
            self.speeds = [1.0]
            return
        affordance = np.asarray(motion["affordance"], float)
        distance = grid.distance_to(affordance)
        cost = self.config["target_weight"] * distance / max(float(distance.max()), 1e-9)
        if "avoidance" in motion and (np.asarray(motion["avoidance"]) > 0).any():
            sigma = self.config["obstacle_sigma"] * grid.n
            cost = cost + self.config["obstacle_weight"] * voxels.smooth(np.asarray(motion["avoidance"]) > 0, sigma)
        self.target = grid.target_point(affordance)
        path = self._descend(cost, grid.to_voxel(movable), grid.n)
        self.points = [grid.to_world(v) for v in path] + [self.target]
        if "rotation" in motion:
            self.rotation = np.asarray(motion["rotation"][grid.to_voxel(self.target)], float)
        self.commands, command = [], self.command
        for i, v in enumerate([*path, grid.to_voxel(self.target)]):
            value = self._gripper_value(motion, grid, v, last=i == len(path))
            command = command if value is None else _command(value)
            self.commands.append(command)
            speed = 1.0 if "velocity" not in motion else float(np.clip(motion["velocity"][v], 0.05, 1.0))
            self.speeds.append(speed)

    def _gripper_value(self, motion: dict, grid, voxel: tuple, last: bool) -> float | None:
        if "gripper" not in motion:
            return None
        gmap = np.asarray(motion["gripper"])
        value = float(gmap[voxel])
        if last:
            opened = gmap >= 0.5
            if opened.any() and not opened.all():
                rare = opened if opened.sum() < (~opened).sum() else ~opened
                if ndimage.distance_transform_edt(~rare)[voxel] <= 3:
                    value = 1.0 if rare is opened else 0.0
        return value

    @staticmethod
    def _descend(cost: np.ndarray, start: tuple, n: int) -> list[tuple]:
        path, current = [], np.array(start)
        for _ in range(3 * n):
            candidates = current + _NEIGHBOURS
            inside = ((candidates >= 0) & (candidates < n)).all(axis=1)
            candidates = candidates[inside]
            costs = cost[tuple(candidates.T)]
            best = int(np.argmin(costs))
            if costs[best] >= cost[tuple(current)] - 1e-12:
                break
            current = candidates[best]
            path.append(tuple(int(v) for v in current))
        return path

    def _movable_position(self, inputs: dict, eef: np.ndarray) -> np.ndarray:
        name = (self.motion or {}).get("movable", "gripper") if "motion" not in inputs else \
            inputs["motion"].get("movable", "gripper")
        objects = inputs.get("objects") or {}
        if name in objects:
            return np.asarray(objects[name]["position"], float)
        return eef

    def _finished(self, movable: np.ndarray) -> bool:
        if self.ticks > self.config["max_ticks_per_motion"]:
            return True
        if "affordance" not in self.motion and not self.motion.get("home"):
            return self.ticks > self.config["gripper_ticks"]
        return float(np.linalg.norm(movable - self.target)) < self.config["tolerance_m"]

    def _follow(self, eef: np.ndarray, movable: np.ndarray) -> dict:
        reach = 3 * self.config["tolerance_m"]
        while len(self.points) > 1:
            to_target = self.target - movable
            to_point = self.points[0] - movable
            if np.linalg.norm(to_point) < reach or float(np.dot(to_target, to_point)) <= 0:
                self.points, self.commands, self.speeds = self.points[1:], self.commands[1:], self.speeds[1:]
            else:
                break
        self.command = self.commands[0]
        offset = eef - movable
        return {"waypoints": {"points": [[float(v) for v in p + offset] for p in self.points],
                              "rotation": [float(v) for v in self.rotation], "gripper": self.command,
                              "speed": self.speeds[0]}}

    def _hold(self, eef: np.ndarray, gripper: dict) -> dict:
        if self.motion is not None and self.done:
            self.command = self.commands[-1]
        rotation = self.rotation if self.motion is not None else np.asarray(gripper["quaternion"], float)
        return {"waypoints": {"points": [[float(v) for v in eef]], "rotation": [float(v) for v in rotation],
                              "gripper": self.command, "speed": 1.0}}



@node_type(
    "libero.VoxelController",
    inputs={"waypoints": {"type": "Waypoints", "doc": "from the path planner"},
            "gripper": {"type": "Gripper", "doc": "end-effector state"}},
    outputs={"actions": {"type": "ActionChunk", "doc": "end-effector delta actions for the simulator"}},
    config_schema={
        "type": "object", "additionalProperties": False,
        "properties": {
            **voxels.STEERING_CONFIG,
            "rotation_gain": {"type": "number", "minimum": 0, "default": 1.0,
                              "description": "rotation = rotation_gain * angle error / 0.5 rad, clipped"},
        },
    },
    role="action",
    doc="Turns the next waypoint and the planned rotation into end-effector delta actions with the planned "
        "gripper command.",
)
class VoxelController(Node):
    """The goal is the first waypoint at least `lookahead_m` from the end effector, else
    the last one. Translation: gain x (goal - position) / 5 cm / `chunk`, clipped per axis
    to [-1, 1], times the planned `speed`. Rotation: the rotation (world frame, as
    axis-angle) from the end effector's orientation to the planned one, x rotation_gain /
    0.5 rad / `chunk`, clipped per axis to [-1, 1]. The gripper value is the planned
    command. It emits `chunk` copies of that action, all from this tick's state."""

    def step(self, inputs: dict, ctx) -> dict:
        state, plan, n = inputs["gripper"], inputs["waypoints"], self.config["chunk"]
        move = voxels.steer(np.asarray(state["position"], float), plan, self.config)
        error = (Rotation.from_quat(plan["rotation"]) * Rotation.from_quat(state["quaternion"]).inv()).as_rotvec()
        turn = np.clip(self.config["rotation_gain"] * error / 0.5 / n, -1.0, 1.0)
        action = [*move.tolist(), *turn.tolist(), float(plan["gripper"])]
        return {"actions": [list(action) for _ in range(n)]}

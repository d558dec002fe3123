"""VLABench as a simulator node, following its evaluator loop
(`evaluation/evaluator/base.py`) and its π0 client (`policy/openpi.py`):
four cameras in `rgb` (right, left, front, wrist); `ee_state` = position (3),
quaternion w-first (4), gripper (1); the policy answers target positions in the
robot frame (0, -0.4, 0.78), Euler angles and a gripper value (>= 0.1 opens the
fingers to 0.04 each); IK turns the target pose into joint positions; success when
the timestep is the last; 200 steps. Its output ports are the LIBERO simulator's
(`images`, `gripper`, `instruction`, `feedback`), so the same policy nodes wire to it."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from executors.manipulation.adapters import require
from harness.canvas.registry import SimulatorNode, node_type

ROBOT_FRAME = np.array([0.0, -0.4, 0.78])
CAMERAS = ("right", "left", "front", "wrist")
MAX_STEPS = 200
INSTALL = "clone github.com/OpenMOSS/VLABench, pip install -e it and run its asset download script"


def euler_to_quat(euler) -> np.ndarray:
    return Rotation.from_euler("xyz", np.asarray(euler, float)).as_quat(scalar_first=True)


def images(obs: dict) -> dict:
    """`rgb` (4 x H x W x 3: right, left, front, wrist) as one image per camera name."""
    rgb = np.asarray(obs["rgb"])
    if rgb.ndim != 4 or len(rgb) != len(CAMERAS) or rgb.shape[-1] != 3:
        raise ValueError(f"VLABench rgb must be {len(CAMERAS)} x H x W x 3 ({', '.join(CAMERAS)}), got {rgb.shape}")
    return {name: np.ascontiguousarray(rgb[i], dtype=np.uint8) for i, name in enumerate(CAMERAS)}


def gripper(ee_state) -> dict:
    """The LIBERO simulator's gripper fields from VLABench's 8-number `ee_state`: position,
    quaternion x, y, z, w (VLABench's is w first), the gripper value as the opening, split
    evenly over the two fingers (LIBERO's signs: +, -)."""
    ee = np.asarray(ee_state, float)
    if ee.shape != (8,):
        raise ValueError(f"VLABench ee_state must have 8 numbers (position, quaternion w-first, gripper), got {ee.shape}")
    opening = float(ee[7])
    return {"position": [float(v) for v in ee[:3]], "quaternion": [float(v) for v in np.roll(ee[3:7], -1)],
            "fingers": [opening / 2, -opening / 2], "opening": opening}


def target_pose(action) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A policy action -> (world position, quaternion w-first, finger positions) for the IK step."""
    action = np.asarray(action, float)
    fingers = np.full(2, 0.04) if action[-1] >= 0.1 else np.zeros(2)
    return action[:3] + ROBOT_FRAME, euler_to_quat(action[3:6]), fingers


@node_type(
    "manipulation.VLABenchSimulator",
    inputs={"actions": {"type": "ActionChunk",
                        "doc": "policy actions [x, y, z (robot frame), roll, pitch, yaw, gripper], one per step"}},
    outputs={"images": {"type": "Images", "doc": "{'right', 'left', 'front', 'wrist'}: uint8 H x W x 3"},
             "gripper": {"type": "Gripper", "doc": "{position, quaternion [x,y,z,w], fingers [2], opening m} of the "
                                                   "end effector (from ee_state)"},
             "instruction": {"type": "Text", "doc": "the task's instruction"},
             "feedback": {"type": "Feedback",
                          "doc": "{'steps': steps executed so far, 'reward': 1.0 once succeeded, else 0.0}. It "
                                 "reports the previous tick: the actions sent at tick t run when tick t ends, and "
                                 "nodes read what they did at tick t + 1 (at tick 0 the reset's: steps 0)"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {}},
    doc="A VLABench task (episode level = task name, seed = episode index); needs VLABench and its assets "
        "(not available on every machine: the node says what to install).",
)
class VLABenchSimulator(SimulatorNode):
    """A VLABench task: episode level = task name, loaded with `random_init=False`; the
    episode seed is not used, so every episode of a task starts the same. Each action
    [x, y, z (robot frame), roll, pitch, yaw, gripper] is turned into joint positions by
    inverse kinematics; a gripper value >= 0.1 opens the fingers, else closes them. Success
    is the last timestep; the environment's own limit is 200 steps (the runtime's step cap
    may end an episode sooner). The reward is 1 on success, else 0. Without VLABench it
    raises, naming what to install."""

    def setup(self) -> None:
        self.env = None

    def reset_episode(self, episode: dict, ctx) -> dict:
        envs = require("VLABench.envs", "VLABench", INSTALL)
        if self.env is not None:
            self.env.close()
        self.env = envs.load_env(episode["level"], run_mode="eval", random_init=False)
        self.env.reset()
        self.obs = self.env.get_observation()
        self.instruction = self.env.task.get_instruction()
        self.steps, self.succeeded = 0, False
        return self._outputs()

    def step(self, inputs: dict, ctx) -> dict:
        position, quat, fingers = target_pose(inputs["actions"])
        joints = self.env.robot.get_qpos_from_ee_pos(physics=self.env.physics, pos=position, quat=quat)[:7]
        timestep = self.env.step(np.concatenate([joints, fingers]))
        self.obs = self.env.get_observation()
        self.steps += 1
        self.succeeded = bool(timestep.last())
        return self._outputs()

    def done(self) -> bool:
        return self.succeeded or self.steps >= MAX_STEPS

    def result(self) -> dict:
        return {"success": self.succeeded, "reward": float(self.succeeded), "steps": self.steps}

    def close(self) -> None:
        if self.env is not None:
            self.env.close()

    def _outputs(self) -> dict:
        return {"images": images(self.obs), "gripper": gripper(self.obs["ee_state"]), "instruction": self.instruction,
                "feedback": {"steps": self.steps, "reward": float(self.succeeded)}}

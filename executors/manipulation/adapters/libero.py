"""LIBERO as a simulator node, following openpi's LIBERO example (`examples/libero/main.py`):
both images rotated 180° and padded to 224, state = eef position + axis-angle + the two
finger positions, 10 no-op steps to let objects settle, success = the env's `done`,
per-suite step caps."""

from __future__ import annotations

import numpy as np

from executors.manipulation import openpi_format
from executors.manipulation.adapters import require
from harness.canvas.registry import SimulatorNode, node_type

MAX_STEPS = {"libero_spatial": 220, "libero_object": 280, "libero_goal": 300, "libero_10": 520, "libero_90": 400}
SETTLE_STEPS = 10
NOOP = [0.0] * 6 + [-1.0]
RESOLUTION = 256  # the example renders at 256 and the policy side pads to 224
INSTALL = ("pip install libero (pins robosuite 1.4.0: use a separate virtualenv) and let it fetch its assets "
           "on first run")


def rotate(frame: np.ndarray) -> np.ndarray:
    """LIBERO renders upside down; openpi's example flips both axes."""
    return np.ascontiguousarray(np.asarray(frame)[::-1, ::-1])


def state(obs: dict) -> np.ndarray:
    return np.concatenate([obs["robot0_eef_pos"], openpi_format.quat_to_axis_angle(obs["robot0_eef_quat"]),
                           obs["robot0_gripper_qpos"]]).astype(np.float32)


def observation(obs: dict, prompt: str) -> dict:
    """The openpi request for one LIBERO observation."""
    return openpi_format.observation(rotate(obs["agentview_image"]), rotate(obs["robot0_eye_in_hand_image"]),
                                     state(obs), prompt)


def gripper(obs: dict) -> dict:
    fingers = obs["robot0_gripper_qpos"]
    return {"position": [float(v) for v in obs["robot0_eef_pos"]],
            "quaternion": [float(v) for v in obs["robot0_eef_quat"]],
            "fingers": [float(v) for v in fingers], "opening": float(fingers[0] - fingers[1])}


@node_type(
    "manipulation.LiberoSimulator",
    inputs={"actions": {"type": "ActionChunk", "doc": "7-vectors (OSC delta pose + gripper), as openpi's LIBERO policy emits"}},
    outputs={"images": {"type": "Images", "doc": "{'agentview', 'robot0_eye_in_hand'}: uint8, rotated 180° as openpi does"},
             "gripper": {"type": "Gripper", "doc": "end-effector state"},
             "instruction": {"type": "Text", "doc": "the task's language instruction"},
             "feedback": {"type": "Feedback", "doc": "{'steps', 'reward'}"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {}},
    doc="A LIBERO task (episode level '<suite>/<task index>', seed = initial-state index); needs the libero "
        "package and its assets (not available on every machine: the node says what to install).",
)
class LiberoSimulator(SimulatorNode):
    """A LIBERO task: episode level '<suite>/<task index>', seed = index of the task's
    initial state. After reset it runs 10 no-op steps (gripper open) so objects settle.
    Each action is passed to the environment as is; success is the environment's `done`.
    The step cap is the suite's (220, 280, 300, 520 or 400), lowered by the episode's
    `max_steps`. Without the libero package it raises, naming what to install."""

    def setup(self) -> None:
        self.env, self.key = None, None

    def reset_episode(self, episode: dict, ctx) -> dict:
        benchmark = require("libero.libero.benchmark", "LIBERO", INSTALL)
        envs = require("libero.libero.envs", "LIBERO", INSTALL)
        suite_name, task_index = str(episode["level"]).split("/")
        suite = benchmark.get_benchmark_dict()[suite_name]()
        task = suite.get_task(int(task_index))
        if self.key != (suite_name, task_index):
            from pathlib import Path

            from libero.libero import get_libero_path

            bddl = Path(get_libero_path("bddl_files")) / task.problem_folder / task.bddl_file
            self.env = envs.OffScreenRenderEnv(bddl_file_name=str(bddl), camera_heights=RESOLUTION,
                                               camera_widths=RESOLUTION)
            self.key = (suite_name, task_index)
        self.env.reset()
        self.obs = self.env.set_init_state(suite.get_task_init_states(int(task_index))[int(episode["seed"])])
        for _ in range(SETTLE_STEPS):
            self.obs, _, _, _ = self.env.step(NOOP)
        self.instruction, self.steps, self.reward, self.succeeded = task.language, 0, 0.0, False
        self.cap = min(int(episode.get("max_steps") or MAX_STEPS[suite_name]), MAX_STEPS[suite_name])
        return self._outputs()

    def step(self, inputs: dict, ctx) -> dict:
        self.obs, reward, done, _ = self.env.step(np.asarray(inputs["actions"], float).tolist())
        self.steps += 1
        self.reward += float(reward)
        self.succeeded = bool(done)
        return self._outputs()

    def done(self) -> bool:
        return self.succeeded or self.steps >= self.cap

    def result(self) -> dict:
        return {"success": self.succeeded, "reward": self.reward, "steps": self.steps, "instruction": self.instruction}

    def close(self) -> None:
        if self.env is not None:
            self.env.close()

    def _outputs(self) -> dict:
        return {"images": {"agentview": rotate(self.obs["agentview_image"]),
                           "robot0_eye_in_hand": rotate(self.obs["robot0_eye_in_hand_image"])},
                "gripper": gripper(self.obs), "instruction": self.instruction,
                "feedback": {"steps": self.steps, "reward": self.reward}}

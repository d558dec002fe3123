"""robosuite environments for the manipulation executor, one per task per process.

Building a robosuite environment the first time in a process compiles robosuite's
numba kernels (tens of seconds, cached on disk by numba afterwards); every later
episode of the same task reuses the environment and only resets it. State-based
observations are the default; cameras are built only when asked for.

Determinism: an episode must be a function of its seed alone, whichever process
runs it. robosuite 1.4 draws from numpy's global generator, both for part of the
*model* when it builds an environment (Lift's cube half-extents, 2.0-2.2 cm) and,
at every reset, for the object placement and the robot's initialisation noise;
with `hard_reset=False` the model is never rebuilt. Unseeded, every worker process
would get its own cube (and slightly different trajectories for the same episode).
So every environment is built right after seeding that generator with
`BUILD_SEED`, and `reset_env` seeds it with the episode seed.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import threading

import numpy as np

TASKS = ("Lift", "Stack", "PickPlaceCan", "Door")
CONTROL_FREQ = 20
BUILD_SEED = 0  # numpy's global generator at build time (model randomisation), the same in every process
_cache: dict[tuple, object] = {}
_lock = threading.Lock()


class SimulatorUnavailable(RuntimeError):
    """robosuite (or its pinned mujoco) is not installed."""


def import_robosuite():
    """robosuite, imported quietly: its console log handler binds the stderr of import
    time, so its start-up and per-environment warnings (no private macro file, optional
    robot models, unused controller parts) go to a discarded buffer instead, and its
    logger does not pass records on to the application's handlers."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            import robosuite
            from robosuite.controllers import load_controller_config
        logging.getLogger("robosuite_logs").propagate = False
    except ImportError as exc:
        raise SimulatorUnavailable(
            "the manipulation executor needs robosuite 1.4.0 and mujoco 3.3.7: "
            "pip install -e '.[manipulation]'") from exc
    return robosuite, load_controller_config


def make_env(task: str, cameras: tuple[str, ...] = (), camera_size: int = 128):
    """The process's environment for `task` (built on first use): Panda arm, end-effector
    (OSC_POSE, delta) control at 20 Hz, no horizon of its own (the step cap ends episodes)."""
    if task not in TASKS:
        raise ValueError(f"unknown manipulation task {task!r} (tasks: {', '.join(TASKS)})")
    key = (task, tuple(cameras), camera_size)
    with _lock:
        if key not in _cache:
            robosuite, controller_config = import_robosuite()
            render = bool(cameras)
            np.random.seed(BUILD_SEED)
            _cache[key] = robosuite.make(
                task, robots="Panda", controller_configs=controller_config(default_controller="OSC_POSE"),
                has_renderer=False, has_offscreen_renderer=render, use_camera_obs=render,
                camera_names=list(cameras) or "agentview", camera_heights=camera_size, camera_widths=camera_size,
                camera_segmentations="instance" if render else None, camera_depths=render,
                use_object_obs=True, reward_shaping=True, control_freq=CONTROL_FREQ,
                horizon=100_000, ignore_done=True, hard_reset=False)
        return _cache[key]


def reset_env(env, seed: int) -> dict:
    """Reset to the episode's seeded object placement (and robot initialisation noise);
    the model itself (object sizes) is the same for every episode (see BUILD_SEED)."""
    np.random.seed(int(seed) % 2**32)
    for robot in env.robots:  # the gripper model keeps its last command across soft resets
        robot.gripper.current_action = np.zeros(robot.gripper.dof)
    return env.reset()


"""LIBERO environments, a few per process, reset to a task's initial state.

Building a LIBERO environment takes seconds (the BDDL problem, its MuJoCo model and
robosuite's controllers), so each process keeps the last `KEEP` it built, keyed by
(suite, task, cameras), and only resets them. Cameras are built only when asked for:
without them the environment has no offscreen renderer at all.

An episode follows openpi's LIBERO example: reset, set the task's initial state
(from the package's own init-state file), then `SETTLE_STEPS` no-op actions
(gripper open) so the objects come to rest. robosuite 1.4 draws its placement and
robot-noise samples from numpy's global generator (overridden by the initial state)
and its gripper model keeps its last command across resets: both are cleared, so an
episode is the same in every process whatever ran before.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import logging
import os
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from executors.libero import suites

SETTLE_STEPS = 10
NOOP = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0)
CAMERAS = ("agentview", "robot0_eye_in_hand")
KEEP = 4
_cache: OrderedDict[tuple, object] = OrderedDict()
_lock = threading.Lock()
_hooked: list[bool] = []


def import_libero():
    """LIBERO's env module, imported quietly (robosuite's macro-file warnings go to a
    discarded buffer). Rendering goes through EGL unless MUJOCO_GL says otherwise."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    suites.require()
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        import robosuite  # noqa: F401 - its logger is configured on import
        from libero.libero import envs
    logging.getLogger("robosuite_logs").propagate = False
    return envs


def _close_all() -> None:
    """Close cached environments before the interpreter tears down EGL (else each render
    context's destructor reports an EGL error at exit). Registered after robosuite's own
    exit hook (EGL's terminate, added when the first renderer is made), so it runs first."""
    while _cache:
        _cache.popitem()[1].close()


def bddl_path(task) -> Path:
    from libero.libero import get_libero_path

    return Path(get_libero_path("bddl_files")) / task.problem_folder / task.bddl_file


def make_env(suite_name: str, task_index: int, cameras: tuple[str, ...] = (), size: int = 256):
    """The process's environment for the task (built on first use, the least recently used
    one dropped beyond KEEP)."""
    key = (suite_name, int(task_index), tuple(cameras), int(size))
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
        envs = import_libero()
        task = suites.suite(suite_name).get_task(int(task_index))
        render = bool(cameras)
        np.random.seed(0)
        with contextlib.redirect_stdout(io.StringIO()):
            env = envs.env_wrapper.ControlEnv(
                bddl_file_name=str(bddl_path(task)), use_camera_obs=render, has_renderer=False,
                has_offscreen_renderer=render, camera_names=list(cameras) or ["agentview"],
                camera_heights=size, camera_widths=size, ignore_done=True)
        if render and not _hooked:
            atexit.register(_close_all)
            _hooked.append(True)
        _cache[key] = env
        while len(_cache) > KEEP:
            _cache.popitem(last=False)[1].close()
        return env


def reset(env, suite_name: str, task_index: int, init_state: int) -> dict:
    """The task's initial state `init_state`, after the settle steps; the observation."""
    states = suites.suite(suite_name).get_task_init_states(int(task_index))
    if not 0 <= int(init_state) < len(states):
        raise ValueError(f"{suite_name} task {task_index} has {len(states)} initial states, not {init_state}")
    np.random.seed(int(init_state))
    for robot in env.env.robots:  # the gripper model keeps its last command across soft resets
        robot.gripper.current_action = np.zeros(robot.gripper.dof)
    env.reset()
    obs = env.set_init_state(states[int(init_state)])
    for _ in range(SETTLE_STEPS):
        obs, _, _, _ = env.step(list(NOOP))
    return obs


def language(suite_name: str, task_index: int) -> str:
    return suites.suite(suite_name).get_task(int(task_index)).language


def bddl_language(env) -> str:
    """The `:language` of the environment's problem file (LIBERO's parser keeps it as words)."""
    words = env.env.parsed_problem["language_instruction"]
    return " ".join(words) if isinstance(words, list) else str(words).strip()

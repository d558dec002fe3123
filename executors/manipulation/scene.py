"""Ground-truth scene descriptions of the robosuite tasks (the perception VoxPoser's
RLBench setup takes from ground-truth masks): object names, positions and sizes read
from the simulator state, the gripper, and the instruction text."""

from __future__ import annotations

import numpy as np

INSTRUCTIONS = {
    "Lift": "lift the cube",
    "Stack": "stack the red cube on the green cube",
    "PickPlaceCan": "put the can in its bin",
    "Door": "open the door",
}
# half extents (m) used for the objects' voxel masks
_SIZES = {"cube": 0.021, "red cube": 0.021, "green cube": 0.026, "can": 0.035, "bin": 0.1, "handle": 0.02,
          "door": 0.1, "table": 0.0}


def objects(task: str, env, obs: dict) -> dict[str, dict]:
    """Object name -> {"position": [x, y, z], "size": half extent} from the true state."""
    found: dict[str, np.ndarray] = {}
    if task == "Lift":
        found["cube"] = obs["cube_pos"]
    elif task == "Stack":
        found["red cube"] = obs["cubeA_pos"]
        found["green cube"] = obs["cubeB_pos"]
    elif task == "PickPlaceCan":
        found["can"] = obs["Can_pos"]
        found["bin"] = env.target_bin_placements[env.object_to_id["can"]]
    elif task == "Door":
        found["handle"] = obs["handle_pos"]
        found["door"] = obs["door_pos"]
    return {name: {"position": [float(v) for v in pos], "size": _SIZES[name]} for name, pos in found.items()}


def gripper_state(obs: dict) -> dict:
    """End effector position, quaternion (x, y, z, w), finger joint positions and opening (m)."""
    fingers = obs["robot0_gripper_qpos"]
    return {"position": [float(v) for v in obs["robot0_eef_pos"]],
            "quaternion": [float(v) for v in obs["robot0_eef_quat"]],
            "fingers": [float(v) for v in fingers],
            "opening": float(fingers[0] - fingers[1])}

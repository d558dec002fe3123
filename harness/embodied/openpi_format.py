"""Observations in the format openpi's LIBERO/VLABench clients send a π0 server:
`observation/image` and `observation/wrist_image` (224x224x3 uint8, resized with
padding), `observation/state` (float32) and `prompt` (text)."""

from __future__ import annotations

import numpy as np

IMAGE_SIZE = 224


def quat_to_axis_angle(quat_xyzw) -> np.ndarray:
    """Axis-angle (3,) of a unit quaternion (x, y, z, w) — robosuite's and LIBERO's convention."""
    q = np.asarray(quat_xyzw, dtype=np.float64)
    w = float(np.clip(q[3], -1.0, 1.0))
    den = np.sqrt(max(1.0 - w * w, 0.0))
    if den < 1e-8:
        return np.zeros(3)
    return q[:3] * 2.0 * np.arccos(w) / den


def image(frame: np.ndarray | None) -> np.ndarray:
    """uint8 224x224x3; a black frame when the simulator renders no camera."""
    from openpi_client import image_tools

    if frame is None:
        return np.zeros((IMAGE_SIZE, IMAGE_SIZE, 3), np.uint8)
    return image_tools.convert_to_uint8(image_tools.resize_with_pad(np.asarray(frame), IMAGE_SIZE, IMAGE_SIZE))


def observation(image_main, image_wrist, state, prompt: str) -> dict:
    return {"observation/image": image(image_main), "observation/wrist_image": image(image_wrist),
            "observation/state": np.asarray(state, dtype=np.float32), "prompt": str(prompt)}


def robosuite_state(gripper: dict, finger_qpos) -> np.ndarray:
    """LIBERO's state layout on robosuite: eef position (3), axis-angle (3), finger positions (2)."""
    return np.concatenate([np.asarray(gripper["position"], float), quat_to_axis_angle(gripper["quaternion"]),
                           np.asarray(finger_qpos, float)]).astype(np.float32)


def connect(node_id: str, host: str, port: int, start_hint: str):
    """openpi_client's WebsocketClientPolicy on host:port; an unreachable server (5 s) raises
    ConnectionError naming the node, the address and `start_hint` (what to start)."""
    import socket

    from openpi_client.websocket_client_policy import WebsocketClientPolicy

    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as exc:
        raise ConnectionError(f"node {node_id!r}: no policy server at {host}:{port} ({exc}); {start_hint}") from None
    return WebsocketClientPolicy(host=host, port=port)

"""`libero.Pi0Policy`: π0 on LIBERO through openpi's client, sending exactly what
openpi's LIBERO example (`examples/libero/main.py`) sends."""

from __future__ import annotations

import numpy as np

from harness.canvas.registry import Node, node_type
from harness.embodied import openpi_format


def state(gripper: dict) -> np.ndarray:
    """openpi's LIBERO state: eef position (3), axis-angle of the eef quaternion (3), finger positions (2),
    float64 as the example concatenates them from the observation."""
    return np.concatenate([np.asarray(gripper["position"], float),
                           openpi_format.quat_to_axis_angle(gripper["quaternion"]),
                           np.asarray(gripper["fingers"], float)])


def request(images: dict, gripper: dict, prompt: str, image_camera: str, wrist_camera: str) -> dict:
    """The openpi request of one observation; the images as LIBERO renders them turned 180° (the
    simulator node does that), resized with padding to 224x224 uint8 here."""
    missing = [c for c in (image_camera, wrist_camera) if c not in images]
    if missing:
        raise ValueError(f"no {', '.join(missing)} image: render it (libero.Simulator config.cameras)")
    return {"observation/image": openpi_format.image(images[image_camera]),
            "observation/wrist_image": openpi_format.image(images[wrist_camera]),
            "observation/state": state(gripper), "prompt": str(prompt)}


@node_type(
    "libero.Pi0Policy",
    inputs={"images": {"type": "Images", "doc": "the agentview and wrist frames (256x256, turned 180°)"},
            "gripper": {"type": "Gripper", "doc": "end-effector state (-> observation/state)"},
            "instruction": {"type": "Text", "doc": "the task's language (-> prompt)"},
            "objects": {"type": "Objects", "required": False,
                        "doc": "ground-truth scene, read only by the offline stand-in (never sent to a server)"}},
    outputs={"actions": {"type": "ActionChunk", "doc": "the first `replan_steps` actions of the returned chunk"}},
    config_schema={
        "type": "object", "additionalProperties": False,
        "properties": {
            "host": {"type": ["string", "null"], "default": None,
                     "description": "openpi policy server (scripts/serve_policy.py --env LIBERO); null: start the "
                                    "scripted stand-in (not π0) on a loopback port for this node"},
            "port": {"type": ["integer", "null"], "minimum": 1, "maximum": 65535, "default": 8000},
            "replan_steps": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5,
                             "description": "actions executed of each returned chunk before asking again "
                                            "(openpi's LIBERO example: 5)"},
            "image_camera": {"type": "string", "default": "agentview"},
            "wrist_camera": {"type": "string", "default": "robot0_eye_in_hand"},
        },
    },
    role="action",
    doc="π0 over openpi's websocket protocol as openpi's LIBERO example queries it: observation/image and "
        "observation/wrist_image (224x224 uint8, padded), observation/state (eef position, axis-angle, two finger "
        "positions; 8 numbers), prompt = the task language; executes `replan_steps` actions of each chunk.",
)
class Pi0Policy(Node):
    """Each tick it sends one request through `openpi_client`'s `WebsocketClientPolicy` and
    emits the first `replan_steps` actions of the returned chunk as one action chunk (the
    simulator steps through them before the next tick, as openpi's example executes its
    action plan before asking again). The request: `observation/image` and
    `observation/wrist_image` - the `image_camera` and `wrist_camera` frames, resized
    with padding to 224x224 and converted to uint8 (openpi_client.image_tools); a
    missing camera is a node error naming the simulator setting - `observation/state`
    (8 float32: end-effector position, the axis-angle of its quaternion, the two finger
    positions) and `prompt` (the instruction). The connection is made on the first tick
    and kept. With `host` null it first starts, for this node, the scripted STAND-IN
    (executors/libero/policy_stand_in.py: openpi's own server code serving a scripted
    controller that reads the `objects` input in-process; not a learned policy);
    otherwise it connects to `host`:`port`, and an unreachable server (5 s) is a node
    error. A text (error) reply, or a chunk shorter than `replan_steps`, is a node error
    (no retry)."""

    def setup(self) -> None:
        self.server = None
        self.client = None

    def _connect(self) -> None:
        host, port = self.config["host"], self.config["port"]
        if host is None:
            from executors.libero.policy_stand_in import LoopbackPolicyServer

            self.server = LoopbackPolicyServer()
            host, port = self.server.host, self.server.port
        self.client = openpi_format.connect(self.node_id, host, port, "start one (openpi: scripts/serve_policy.py "
                                            "--env LIBERO) or set config.host to null for the scripted stand-in")

    def step(self, inputs: dict, ctx) -> dict:
        if self.client is None:
            self._connect()
        if self.server is not None:
            self.server.policy.scene = inputs.get("objects") or {}
        obs = request(inputs["images"], inputs["gripper"], inputs["instruction"],
                      self.config["image_camera"], self.config["wrist_camera"])
        chunk = np.asarray(self.client.infer(obs)["actions"])
        n = self.config["replan_steps"]
        if chunk.ndim != 2 or len(chunk) < n:
            raise ValueError(f"node {self.node_id!r}: the policy answered {chunk.shape} actions, fewer than "
                             f"replan_steps={n}")
        return {"actions": [[float(v) for v in action] for action in chunk[:n]]}

    def close(self) -> None:
        if self.client is not None:
            self.client._ws.close()  # noqa: SLF001 - openpi_client has no public close
        if self.server is not None:
            self.server.close()

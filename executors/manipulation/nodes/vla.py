"""The SHAPER decomposition on robosuite: a planner emits a text subgoal per tick;
`manipulation.VLAPolicy` sends openpi-format observations through openpi_client's
`WebsocketClientPolicy` and executes the returned action chunk 5 steps at a time
(`ActionChunkBroker`)."""

from __future__ import annotations

import json
import socket

from executors.manipulation import openpi_format, subgoals
from harness.canvas.registry import Node, node_type


@node_type(
    "manipulation.VLAPolicy",
    inputs={"subgoal": {"type": "Text", "doc": "the planner's text subgoal (the policy's prompt)"},
            "gripper": {"type": "Gripper", "doc": "end-effector state (-> observation/state)"},
            "images": {"type": "Images", "required": False,
                       "doc": "camera frames (-> observation/image, observation/wrist_image); black frames without"}},
    outputs={"actions": {"type": "ActionChunk", "doc": "the next `action_horizon` actions of the policy's chunk"}},
    config_schema={
        "type": "object", "additionalProperties": False,
        "properties": {
            "host": {"type": ["string", "null"], "default": None,
                     "description": "policy server (e.g. openpi's serve_policy.py); null: start the scripted "
                                    "subgoal controller on a loopback port for this node"},
            "port": {"type": ["integer", "null"], "minimum": 1, "maximum": 65535, "default": None},
            "action_horizon": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5,
                               "description": "actions executed per inference (ActionChunkBroker horizon)"},
            "image_camera": {"type": "string", "default": "agentview"},
            "wrist_camera": {"type": "string", "default": "robot0_eye_in_hand"},
        },
    },
    role="action",
    doc="Low-level VLA policy over the openpi websocket protocol: observation/image, observation/wrist_image "
        "(224x224 uint8), observation/state (eef position, axis-angle, finger positions; float32) and the "
        "subgoal as prompt; executes `action_horizon` actions of each returned chunk per tick.",
)
class VLAPolicy(Node):
    def setup(self) -> None:
        self.server = None
        self.client = self.broker = None

    def _connect(self) -> None:
        from openpi_client.action_chunk_broker import ActionChunkBroker
        from openpi_client.websocket_client_policy import WebsocketClientPolicy

        host, port = self.config["host"], self.config["port"]
        if host is None:
            from executors.manipulation.policy_server import PolicyServer

            self.server = PolicyServer()
            host, port = self.server.host, self.server.port
        try:
            socket.create_connection((host, port), timeout=5).close()
        except OSError as exc:
            raise ConnectionError(f"node {self.node_id!r}: no policy server at {host}:{port} ({exc}); start one "
                                  "(openpi: scripts/serve_policy.py) or set config.host to null for the scripted one")
        self.client = WebsocketClientPolicy(host=host, port=port)
        self.broker = ActionChunkBroker(self.client, action_horizon=self.config["action_horizon"])

    def reset(self, ctx) -> None:
        if self.broker is not None:
            self.broker.reset()

    def step(self, inputs: dict, ctx) -> dict:
        if self.broker is None:
            self._connect()
        gripper, images = inputs["gripper"], inputs.get("images") or {}
        obs = openpi_format.observation(images.get(self.config["image_camera"]),
                                        images.get(self.config["wrist_camera"]),
                                        openpi_format.robosuite_state(gripper, gripper["fingers"]), inputs["subgoal"])
        self.broker.reset()  # a new subgoal each tick: a fresh chunk for it
        chunk = [self.broker.infer(obs)["actions"] for _ in range(self.config["action_horizon"])]
        return {"actions": [[float(v) for v in action] for action in chunk]}

    def close(self) -> None:
        if self.client is not None:
            self.client._ws.close()  # noqa: SLF001 - openpi_client has no public close
        if self.server is not None:
            self.server.close()


@node_type(
    "manipulation.ScriptedPlanner",
    inputs={"instruction": "Text", "objects": "Objects", "gripper": "Gripper"},
    outputs={"subgoal": {"type": "Text", "doc": "the next subgoal (see executors/manipulation/subgoals.py)"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {}},
    role="planning",
    doc="A fixed rule planner (no model): from the scene, the next subgoal — move above the object, down to it, "
        "close the gripper, carry it to the task's goal, open the gripper; an instruction it has no plan for is "
        "a node error.",
)
class ScriptedPlanner(Node):
    def step(self, inputs: dict, ctx) -> dict:
        return {"subgoal": subgoals.next_subgoal(inputs["instruction"], inputs["objects"], inputs["gripper"])}


@node_type(
    "manipulation.SceneText",
    inputs={"objects": "Objects", "gripper": "Gripper"},
    outputs={"text": {"type": "Text", "doc": "one JSON line: objects (position in m) and the gripper"}},
    config_schema={"type": "object", "additionalProperties": False,
                   "properties": {"decimals": {"type": "integer", "minimum": 1, "maximum": 6, "default": 3}}},
    role="perception",
    doc="The scene as compact JSON text for a planner model: object positions and the gripper's position and "
        "opening, rounded.",
)
class SceneText(Node):
    def step(self, inputs: dict, ctx) -> dict:
        d = self.config["decimals"]
        objects = {name: [round(v, d) for v in spec["position"]] for name, spec in inputs["objects"].items()}
        gripper = inputs["gripper"]
        scene = {"objects": objects, "gripper": {"position": [round(v, d) for v in gripper["position"]],
                                                 "opening": round(gripper["opening"], d)}}
        return {"text": json.dumps(scene, separators=(", ", ": "))}

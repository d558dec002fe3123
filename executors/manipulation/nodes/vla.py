"""The SHAPER decomposition on robosuite: a planner emits a text subgoal per tick;
`manipulation.VLAPolicy` sends openpi-format observations through openpi_client's
`WebsocketClientPolicy` and executes the returned action chunk 5 steps at a time
(`ActionChunkBroker`)."""

from __future__ import annotations

import json

from executors.manipulation import subgoals
from harness.canvas.registry import Node, node_type
from harness.embodied import openpi_format


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
    """Queries a policy over openpi's websocket protocol once per tick and emits the first
    `action_horizon` actions of the returned chunk (the rest is discarded; every tick is a
    fresh query for the current subgoal). The connection is made on the first tick and
    kept: with `host` null it starts, for this node, an offline scripted controller on a
    loopback port (not a learned policy: it understands only 'move to (x, y, z) with the
    gripper open|closed', 'close the gripper' and 'open the gripper', and answers 10
    actions); otherwise it connects to `host`:`port`, and an unreachable server (5 s) is
    a node error. The observation: the `image_camera` and `wrist_camera` frames of
    `images`, resized with padding to 224x224 uint8 - a black frame when `images` or that
    camera is missing; the state: end-effector position, axis-angle from its quaternion,
    and the two finger positions (float32); the subgoal text as the prompt. A server
    error reply (e.g. the scripted controller given a subgoal outside its grammar), or a
    chunk shorter than `action_horizon`, raises: a node error, no retry."""

    def setup(self) -> None:
        self.server = None
        self.client = self.broker = None

    def _connect(self) -> None:
        from openpi_client.action_chunk_broker import ActionChunkBroker

        host, port = self.config["host"], self.config["port"]
        if host is None:
            from executors.manipulation.policy_server import PolicyServer

            self.server = PolicyServer()
            host, port = self.server.host, self.server.port
        self.client = openpi_format.connect(self.node_id, host, port, "start one (openpi: scripts/serve_policy.py) "
                                            "or set config.host to null for the scripted one")
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
    """A fixed rule planner (no model) that reads the true scene every tick and emits the
    next subgoal for one of the four task instructions (any other instruction is a node
    error). Per task: the object to grasp and a goal relative to an anchor object's current
    position - Lift: the cube, 15 cm above the cube; Stack: the red cube, 5 cm above the
    green cube; PickPlaceCan: the can, 15 cm above the bin; Door: the handle, 10 cm in -x
    of the handle (for Lift and Door the goal moves with the grasped object). With the
    gripper closed (opening < 7 cm) and within 3 cm of the object: 'open the gripper'
    within 1.5 cm of the goal, else 'move to (goal) with the gripper closed'. Otherwise:
    'close the gripper' within 1.2 cm of the object; 'move to (object) with the gripper
    open' when within 1 cm of it horizontally; else 'move to (8 cm above the object) with
    the gripper open'. Positions are written with 3 decimals in metres."""

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
    """Writes the scene as one line of JSON: {"objects": {name: [x, y, z]}, "gripper":
    {"position": [x, y, z], "opening": m}}, every number rounded to `decimals`, objects in
    the order given. Object sizes and the gripper's orientation and finger positions are
    left out. It never fails on an empty scene ("objects": {})."""

    def step(self, inputs: dict, ctx) -> dict:
        d = self.config["decimals"]
        objects = {name: [round(v, d) for v in spec["position"]] for name, spec in inputs["objects"].items()}
        gripper = inputs["gripper"]
        scene = {"objects": objects, "gripper": {"position": [round(v, d) for v in gripper["position"]],
                                                 "opening": round(gripper["opening"], d)}}
        return {"text": json.dumps(scene, separators=(", ", ": "))}

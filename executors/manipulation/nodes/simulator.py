"""`manipulation.Simulator`: a robosuite single-arm task as a graph node."""

from __future__ import annotations

import numpy as np

from executors.manipulation import envs, scene
from harness.canvas.registry import SimulatorNode, node_type

ACTION_DIM = 7  # end-effector delta position (3), delta rotation axis-angle (3), gripper (1)
CAMERAS = ("agentview", "robot0_eye_in_hand")


@node_type(
    "manipulation.Simulator",
    inputs={"actions": {"type": "ActionChunk",
                        "doc": "7-vectors [dx, dy, dz, drx, dry, drz, gripper] in [-1, 1] (OSC_POSE deltas: "
                               "1 = 5 cm / 0.5 rad per step; gripper -1 open, +1 close), executed in order"}},
    outputs={
        "objects": {"type": "Objects", "doc": "GROUND-TRUTH perception: {name: {position [x,y,z] m, size m}} read "
                                              "from the simulator state (VoxPoser's ground-truth-mask setting)"},
        "gripper": {"type": "Gripper", "doc": "{position [x,y,z], quaternion [x,y,z,w], opening m} of the end effector"},
        "instruction": {"type": "Text", "doc": "the task's instruction"},
        "images": {"type": "Images", "doc": "{camera: uint8[H,W,3] RGB, camera_depth: float32[H,W,1] (normalised "
                                            "0-1), camera_segmentation: int32[H,W,1] instance ids} (only when "
                                            "config.cameras is set)"},
        "feedback": {"type": "Feedback",
                     "doc": "{'steps': control steps executed so far, 'reward': cumulative, 'tick': the tick whose "
                            "actions were executed last}. It reports the previous tick: the actions sent at tick t "
                            "run when tick t ends, and nodes read what they did at tick t + 1, so a node firing at "
                            "tick t sees 'tick' t - 1 (at tick 0 the reset's: steps 0, reward 0, tick 0)"},
        "success": {"type": "Verifier", "privileged": True, "doc": "the task's own success checker"},
    },
    config_schema={
        "type": "object",
        "properties": {
            "cameras": {"type": "array", "items": {"enum": list(CAMERAS)}, "default": [],
                        "description": "render these cameras into `images` (slow: offscreen MuJoCo rendering)"},
            "camera_size": {"type": "integer", "minimum": 32, "maximum": 512, "default": 128},
            "privileged_outputs": {"type": "boolean", "default": False,
                                   "description": "emit `success` (scoring, debugging)"},
        },
        "additionalProperties": False,
    },
    doc="A robosuite task (Lift, Stack, PickPlaceCan, Door) + seed per episode; Panda arm under end-effector "
        "control at 20 Hz; the episode ends when the task's checker succeeds (the runtime's step cap ends it "
        "otherwise).",
)
class Simulator(SimulatorNode):
    """A robosuite task (episode level Lift, Stack, PickPlaceCan or Door) reset to the
    episode seed's object placement. Each action is clipped to [-1, 1] and must have 7
    numbers (else a node error); one action is one 20 Hz control step. After every step
    the task's own checker is run; the episode ends on success (the node has no step cap
    of its own: the runtime's ends it otherwise). A tick without actions steps nothing.
    `objects` and `gripper` are ground truth read from the simulator state; `images`
    exist only when `cameras` is set. Every output is the state after the last step:
    the actions sent at tick t run when tick t ends, so nodes see their outcome at tick
    t + 1, and `feedback` reports that previous tick (`tick` t - 1 at tick t; at tick 0
    the reset's, with steps 0 and tick 0)."""

    fresh_outputs = True  # (new lists of floats, and flipped copies of the frames, each step)

    def setup(self) -> None:
        self.env = None

    def reset_episode(self, episode: dict, ctx) -> dict:
        self.task = episode["level"]
        self.env = envs.make_env(self.task, tuple(self.config["cameras"]), self.config["camera_size"])
        self.episode = episode
        self.obs = envs.reset_env(self.env, episode["seed"])
        self.steps = 0
        self.reward = 0.0
        self.succeeded = False
        return self._outputs(ctx)

    def step(self, inputs: dict, ctx) -> dict:
        action = inputs.get("actions")
        if action is None or self.done():
            return self._outputs(ctx)
        vector = np.clip(np.asarray(action, dtype=float).reshape(-1), -1.0, 1.0)
        if vector.shape != (ACTION_DIM,):
            raise ValueError(f"manipulation.Simulator: an action must have {ACTION_DIM} numbers, got {vector.shape}")
        self.obs, reward, _, _ = self.env.step(vector)
        self.steps += 1
        self.reward += float(reward)
        self.succeeded = bool(self.env._check_success())  # noqa: SLF001 - robosuite's task checker
        return self._outputs(ctx)

    def done(self) -> bool:
        return self.succeeded

    def result(self) -> dict:
        return {"success": self.succeeded, "reward": self.reward, "steps": self.steps,
                "termination": "success" if self.succeeded else "running",
                "level": self.task, "seed": self.episode["seed"], "instruction": scene.INSTRUCTIONS[self.task]}

    def close(self) -> None:
        self.env = None  # environments stay cached for the process (see envs.make_env)

    def _outputs(self, ctx) -> dict:
        out = {
            "objects": scene.objects(self.task, self.env, self.obs),
            "gripper": scene.gripper_state(self.obs),
            "instruction": scene.INSTRUCTIONS[self.task],
            "feedback": {"steps": self.steps, "reward": self.reward, "tick": getattr(ctx, "tick", None)},
        }
        if self.config["cameras"]:
            out["images"] = {}
            for name in self.config["cameras"]:  # robosuite renders bottom-up (OpenGL): flip to top-down
                out["images"][name] = self.obs[f"{name}_image"][::-1].copy()
                out["images"][f"{name}_depth"] = self.obs[f"{name}_depth"][::-1].copy()
                out["images"][f"{name}_segmentation"] = self.obs[f"{name}_segmentation_instance"][::-1].copy()
        if self.config["privileged_outputs"]:
            out["success"] = {"success": self.succeeded}
        return out

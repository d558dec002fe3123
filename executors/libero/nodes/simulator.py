"""`libero.Simulator`: a LIBERO task reset to one of its initial states, as a graph node."""

from __future__ import annotations

import numpy as np

from executors.libero import envs, scene
from harness.canvas.registry import SimulatorNode, node_type

ACTION_DIM = 7  # end-effector delta position (3), delta rotation axis-angle (3), gripper (1)


def rotate(frame: np.ndarray) -> np.ndarray:
    """LIBERO's cameras render upside down: openpi's example turns both images by 180°."""
    return np.ascontiguousarray(np.asarray(frame)[::-1, ::-1])


@node_type(
    "libero.Simulator",
    inputs={"actions": {"type": "ActionChunk",
                        "doc": "7-vectors [dx, dy, dz, drx, dry, drz, gripper] in [-1, 1] (OSC_POSE deltas: 1 = 5 cm / "
                               "0.5 rad per step; gripper -1 open, +1 close), executed in order, one per 20 Hz step"}},
    outputs={
        "objects": {"type": "Objects",
                    "doc": "GROUND-TRUTH perception (privileged: read from the simulator state, no camera): {instance "
                           "name: {kind object|fixture|region, position [x,y,z] m, quaternion [x,y,z,w], aabb "
                           "[[min], [max]], size (horizontal half extent, m)}}"},
        "gripper": {"type": "Gripper", "doc": "{position, quaternion [x,y,z,w], fingers [2], opening m} of the end effector"},
        "instruction": {"type": "Text", "doc": "the task's language instruction"},
        "workspace": {"type": "Workspace", "doc": "{min, max}: a box around the scene, fixed for the episode"},
        "images": {"type": "Images",
                   "doc": "{camera: uint8[H,W,3]} for each of config.cameras, turned 180° as openpi's example does "
                          "(only when cameras is set)"},
        "feedback": {"type": "Feedback",
                     "doc": "{'steps': control steps executed so far, 'reward': cumulative, 'tick': the tick whose "
                            "actions were executed last}. It reports the previous tick: the actions sent at tick t "
                            "run when tick t ends, and nodes read what they did at tick t + 1, so a node firing at "
                            "tick t sees 'tick' t - 1 (at tick 0 the reset's: steps 0, reward 0, tick 0)"},
        "success": {"type": "Verifier", "privileged": True, "doc": "the task's own goal check"},
    },
    config_schema={
        "type": "object", "additionalProperties": False,
        "properties": {
            "cameras": {"type": "array", "uniqueItems": True, "items": {"enum": list(envs.CAMERAS)}, "default": [],
                        "description": "render these cameras into `images` (offscreen MuJoCo rendering; none: no "
                                       "renderer is built)"},
            "camera_size": {"type": "integer", "minimum": 32, "maximum": 512, "default": 256},
            "language": {"enum": ["registry", "bddl"], "default": "registry",
                         "description": "the instruction: the task registry's language (openpi's example), or the "
                                        "problem file's own `:language` (LIBERO-PRO's paraphrased and changed-task "
                                        "suites carry their perturbed instruction only there)"},
            "privileged_outputs": {"type": "boolean", "default": False,
                                   "description": "emit `success` (scoring, debugging)"},
        },
    },
    doc="A LIBERO task (suite, task, initial state per episode) after 10 settle steps; Panda arm under "
        "end-effector delta control at 20 Hz; the episode ends when the task's goal check succeeds.",
)
class Simulator(SimulatorNode):
    """A LIBERO task of the installed package: episode `suite` and `task` (index in the
    suite) pick the BDDL problem, `init_state` one of the task's initial states from the
    package's init-state file; after the reset it runs 10 no-op steps (gripper open) so
    the objects settle, as openpi's LIBERO example does (they are not counted as steps).
    Each action is clipped to [-1, 1] and must have 7 numbers (else a node error); one
    action is one control step. The episode ends when the environment reports done (the
    BDDL goal holds): the node has no step cap of its own, the episode's budget ends it
    otherwise. A tick without actions steps nothing. `objects` and `gripper` are ground
    truth read from the simulator state (privileged perception); `images` exist only when
    `cameras` is set, and only then is an offscreen renderer built. Every output is the
    state after the last step: the actions sent at tick t run when tick t ends, so nodes
    see their outcome at tick t + 1, and `feedback` reports that previous tick (`tick`
    t - 1 at tick t; at tick 0 the reset's, with steps 0 and tick 0). Without LIBERO
    installed it raises, naming the install command."""

    fresh_outputs = True  # (new lists of floats and turned copies of the frames each step; workspace: set at reset)

    def setup(self) -> None:
        self.env = None

    def reset_episode(self, episode: dict, ctx) -> dict:
        self.suite, self.task = str(episode["suite"]), int(episode["task"])
        self.episode = episode
        self.env = envs.make_env(self.suite, self.task, tuple(self.config["cameras"]), self.config["camera_size"])
        self.obs = envs.reset(self.env, self.suite, self.task, int(episode["init_state"]))
        self.scene = scene.Scene(self.env)
        self.instruction = (envs.bddl_language(self.env) if self.config["language"] == "bddl"
                            else envs.language(self.suite, self.task))
        self.steps, self.reward, self.succeeded = 0, 0.0, False
        objects = self.scene.objects()
        self.workspace = scene.workspace(objects, scene.gripper_state(self.obs))
        return self._outputs(ctx, objects)

    def step(self, inputs: dict, ctx) -> dict:
        action = inputs.get("actions")
        if action is None or self.succeeded:
            return self._outputs(ctx)
        vector = np.clip(np.asarray(action, dtype=float).reshape(-1), -1.0, 1.0)
        if vector.shape != (ACTION_DIM,):
            raise ValueError(f"libero.Simulator: an action must have {ACTION_DIM} numbers, got {vector.shape}")
        self.obs, reward, done, _ = self.env.step(vector.tolist())
        self.steps += 1
        self.reward += float(reward)
        self.succeeded = bool(done)
        return self._outputs(ctx)

    def done(self) -> bool:
        return self.succeeded

    def result(self) -> dict:
        return {"success": self.succeeded, "reward": self.reward, "steps": self.steps,
                "suite": self.suite, "task": self.task, "init_state": int(self.episode["init_state"]),
                "instruction": self.instruction}

    def close(self) -> None:
        self.env = None  # environments stay cached for the process (see envs.make_env)

    def _outputs(self, ctx, objects: dict | None = None) -> dict:
        out = {"objects": objects if objects is not None else self.scene.objects(),
               "gripper": scene.gripper_state(self.obs), "instruction": self.instruction,
               "workspace": self.workspace,
               "feedback": {"steps": self.steps, "reward": self.reward, "tick": getattr(ctx, "tick", None)}}
        if self.config["cameras"]:
            out["images"] = {name: rotate(self.obs[f"{name}_image"]) for name in self.config["cameras"]}
        if self.config["privileged_outputs"]:
            out["success"] = {"success": self.succeeded}
        return out

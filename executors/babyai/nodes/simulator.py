"""`babyai.Simulator`: a BabyAI level as a graph node."""

from __future__ import annotations

from harness.lazy import lazy_import

np = lazy_import("numpy")  # node declarations load without numpy

from executors.babyai import world as W
from harness.canvas.registry import SimulatorNode, node_type

MINIGRID_DIR_TO_HEADING = {0: 1, 1: 2, 2: 3, 3: 0}  # east, south, west, north


def _minigrid():
    """The minigrid side (gymnasium, minigrid), imported when a simulator is
    built (`setup`) rather than when the node types are declared."""
    from executors.babyai import envs

    return envs


@node_type(
    "babyai.Simulator",
    inputs={"actions": {"type": "ActionChunk", "doc": "action names or indices, executed in order"}},
    outputs={
        "observation": {"type": "Observation", "doc": "{'image': uint8[7,7,3] egocentric view, 'direction': compass 0-3}"},
        "mission": {"type": "Text", "doc": "the level's instruction"},
        "feedback": {"type": "Feedback",
                     "doc": "{'actions': the names of the actions executed in the previous tick (the whole chunk), "
                            "'blocked': for each, whether it was a forward that bumped into something, 'steps': "
                            "actions executed so far}. It reports the previous tick: the actions sent at tick t run "
                            "when tick t ends, and nodes read what they did at tick t + 1 (at tick 0: both lists "
                            "empty, steps 0)"},
        "true_pose": {"type": "Pose", "privileged": True, "doc": "true grid position and minigrid direction"},
        "full_grid": {"type": "Grid", "privileged": True, "doc": "uint8[W,H,3] encoding of the whole level"},
        "verifier": {"type": "Verifier", "privileged": True, "doc": "pending instruction leaves"},
    },
    config_schema={
        "type": "object",
        "properties": {
            "privileged_outputs": {"type": "boolean", "default": False,
                                   "description": "emit true_pose/full_grid/verifier (scoring, debugging)"},
        },
        "additionalProperties": False,
    },
    doc="A BabyAI level + seed per episode; explicit STOP; one env per level kept alive across episodes. "
        "The episode ends when the level ends it (success, a wrong STOP, or the level's own step limit: "
        "termination `env_max_steps`); the runtime's step cap ends it otherwise. "
        "In a tier's stochastic mode (episode `slip` > 0) each executed action is replaced by a random "
        "move (left, right or forward) with that probability, drawn from a generator seeded by the "
        "episode's noise seed and seed; `feedback.actions` names the action actually executed.",
)
class Simulator(SimulatorNode):
    fresh_outputs = True  # (minigrid encodes a new image per observation; the feedback lists are copies)

    def setup(self) -> None:
        self._envs: dict[str, object] = {}
        self.env = None
        _minigrid()  # import gymnasium/minigrid now, while the runner is built: not inside an episode's wall time

    def reset(self, ctx) -> None:
        pass

    def reset_episode(self, episode: dict, ctx) -> dict:
        level = episode["level"]
        if level not in self._envs:
            self._envs[level] = _minigrid().make_env(level)
        self.env = self._envs[level]
        self.episode = episode
        self.obs = _minigrid().reset_env(self.env, episode["seed"])
        self.steps = 0
        self.reward = 0.0
        self.terminated = self.truncated = False
        self.status = "running"
        self.shortest = _minigrid().shortest_path_length(self.env)
        self.slip_rng = _minigrid().slip_rng(episode)
        self.mission = self.obs["mission"]
        self._executed, self._blocked, self._feedback_tick = [], [], None
        return self._outputs()

    def step(self, inputs: dict, ctx) -> dict:
        """Execute one action, or a whole chunk. The runtime feeds a chunk one action
        per call; `feedback` gathers every action executed during the current tick
        (`ctx.tick`), so the agent sees all of them with the tick's last observation."""
        actions = inputs.get("actions")
        tick = getattr(ctx, "tick", None)
        if tick is None or tick != self._feedback_tick:
            self._executed, self._blocked, self._feedback_tick = [], [], tick
        if actions is None:
            return self._outputs()
        if isinstance(actions, (str, int, np.integer)):
            actions = [actions]
        u = self.env.unwrapped
        for action in list(actions):
            if self.done():
                break
            index = _minigrid().slipped(W.action_index(action), self.slip_rng, float(self.episode.get("slip") or 0.0))
            before = tuple(u.agent_pos)
            # the enum member, not the int: minigrid's AndInstr tests `action is actions.done`
            self.obs, reward, self.terminated, self.truncated, _ = self.env.step(u.actions(index))
            self.steps += 1
            self.reward = float(reward)
            self._executed.append(W.ACTIONS[index])
            self._blocked.append(index == W.ACTION_INDEX["forward"] and tuple(u.agent_pos) == before)
        if self.terminated:
            self.status = "success" if self.reward > 0 else "failure"
        elif self.truncated:
            self.status = "env_max_steps"
        return self._outputs()

    def done(self) -> bool:
        return self.terminated or self.truncated

    def result(self) -> dict:
        success = self.status == "success"
        efficiency = 0.0
        if success and self.shortest:
            efficiency = min(1.0, self.shortest / max(self.steps, 1))
        return {"success": success, "reward": self.reward if success else 0.0, "steps": self.steps,
                "path_efficiency": efficiency, "shortest_path": self.shortest,
                "termination": self.status, "level": self.episode["level"], "seed": self.episode["seed"],
                "mission": self.mission}

    def close(self) -> None:
        for env in self._envs.values():
            env.close()
        self._envs.clear()

    def _outputs(self) -> dict:
        out = {
            "observation": {"image": self.obs["image"], "direction": int(self.obs["direction"])},
            "mission": self.mission,
            "feedback": {"actions": list(self._executed), "blocked": list(self._blocked), "steps": self.steps},
        }
        if self.config.get("privileged_outputs"):
            u = self.env.unwrapped
            out["true_pose"] = {"x": int(u.agent_pos[0]), "y": int(u.agent_pos[1]), "dir": int(u.agent_dir)}
            out["full_grid"] = u.grid.encode()
            out["verifier"] = {"pending": [leaf.surface(u) for leaf in _minigrid().pending_leaves(u.instrs)]}
        return out

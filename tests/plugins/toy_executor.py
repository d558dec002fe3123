"""A toy executor shipped as its own installed distribution, for plug-in tests.

`install_toy_executor(root)` writes, under `root` (a folder put on PYTHONPATH):
the package `toyline` (a 1-D line world: the agent must walk to the episode's
`goal`), its profile and seed, and `toyline-0.1.dist-info/` whose
entry_points.txt registers it in the `architect.executors` group — what
`pip install` of a package declaring that entry point leaves behind.
"""

from __future__ import annotations

import json
from pathlib import Path

SPEC = '''
from harness.executor_api import ExecutorSpec

EXECUTOR = ExecutorSpec(
    name="toyline",
    package="toyline",
    node_modules=("toyline.nodes",),
    episode_keys=("goal",),
    metrics={"success_rate": "higher", "steps": "lower"},
    primary_metric="success_rate",
    seeds={"toyline": "seeds/toyline"},
    optional_dependencies=("toyline_missing_extra",),
)
'''

NODES = '''
from harness.canvas.registry import Node, SimulatorNode, node_type


@node_type("toyline.Line", inputs={"action": "ActionChunk"}, outputs={"position": "Int"},
           role="simulator", doc="A line of cells; the episode ends at its goal cell.")
class Line(SimulatorNode):
    def reset_episode(self, episode, ctx):
        self.goal, self.pos, self.steps = int(episode["goal"]), 0, 0
        return {"position": 0}

    def step(self, inputs, ctx):
        self.pos = max(0, self.pos + int(inputs["action"]))
        self.steps += 1
        return {"position": self.pos}

    def done(self):
        return self.pos >= self.goal

    def result(self):
        return {"success": self.pos >= self.goal, "reward": float(self.pos >= self.goal), "steps": self.steps}


@node_type("toyline.Forward", inputs={"position": "Int"}, outputs={"action": "Action"}, role="control",
           config_schema={"type": "object", "additionalProperties": False,
                          "properties": {"step": {"type": "integer", "minimum": 1, "maximum": 3, "default": 1}}},
           doc="Steps config.step cells forward every tick.")
class Forward(Node):
    def step(self, inputs, ctx):
        return {"action": self.config["step"]}


@node_type("toyline.Dawdle", inputs={"position": "Int"}, outputs={"action": "Action"}, role="control",
           doc="Alternates one step forward and one step back.")
class Dawdle(Node):
    def step(self, inputs, ctx):
        return {"action": 1 if ctx.tick % 2 == 0 else -1}
'''

PROFILE = '''executor: toyline
performance_tier: search
primary_metric: success_rate
secondary_metrics: [steps]
model_profile: null
whitelist: [graph.json, proposal.md]
budgets: {max_steps: 12, wall_seconds: 10}
tiers:
  smoke: {episodes: [{goal: 2}, {goal: 3}]}
  search: {episodes: [{goal: 2}, {goal: 4}, {goal: 6}, {goal: 8}]}
  holdout: {sealed: true, episodes: [{goal: 5}]}
'''

SEED = {
    "schema_version": 1, "name": "toyline-seed", "executor": "toyline", "model_profile": None,
    "nodes": {"sim": {"type": "toyline.Line", "config": {}}, "walk": {"type": "toyline.Dawdle", "config": {}}},
    "edges": [{"from": "sim.position", "to": "walk.position"}, {"from": "walk.action", "to": "sim.action"}],
    "budgets": {"max_steps": 12, "wall_seconds": 10},
    "termination": {"max_ticks": 40},
}


def install_toy_executor(root: Path) -> Path:
    package = root / "toyline"
    (package / "seeds" / "toyline").mkdir(parents=True)
    (package / "__init__.py").write_text(SPEC)
    (package / "nodes.py").write_text(NODES)
    (package / "profile.yaml").write_text(PROFILE)
    (package / "seeds" / "toyline" / "graph.json").write_text(json.dumps(SEED, indent=2))
    dist = root / "toyline-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyline\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text('[architect.executors]\ntoyline = "toyline:EXECUTOR"\n'.replace('"', ""))
    return root

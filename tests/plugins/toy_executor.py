"""A toy executor shipped as its own installed distribution, for plug-in tests.

`install_toy_executor(root)` writes, under `root` (a folder put on PYTHONPATH):
the package `toyline` (a 1-D line world: the agent must walk to the episode's
`goal`), its profile and seed, its data set `toyfacts` (one file, made
locally by its "fetch"), and `toyline-0.1.dist-info/` whose entry_points.txt
registers it in the `architect.executors` group — what `pip install` of a
package declaring that entry point leaves behind.
"""

from __future__ import annotations

import json
from pathlib import Path

SPEC = '''
from harness.executor_api import DataRequirement, ExecutorSpec

EXECUTOR = ExecutorSpec(
    name="toyline",
    package="toyline",
    node_modules=("toyline.nodes",),
    episode_keys=("goal",),
    metrics={"success_rate": "higher", "steps": "lower"},
    primary_metric="success_rate",
    seeds={"toyline": "seeds/toyline"},
    optional_dependencies=("toyline_missing_extra",),
    data=(DataRequirement(name="toyfacts", module="toyline.data"),),
)
'''

DATA = '''"""The toyfacts data set: one file of goal cells."""
import shutil
import sys
from pathlib import Path

from harness.fileio import data_home

ABOUT = "toy facts: the goal cells of the toyline tiers, made locally (public domain)"
TEXT = '{"goals": [2, 4, 6, 8]}'


def _root(dest):
    return Path(dest) if dest is not None else data_home() / "toyfacts"


def fetch(dest=None, *, say):
    root = _root(dest)
    present = complete(root)
    if not present:
        root.mkdir(parents=True, exist_ok=True)
        (root / "facts.json").write_text(TEXT)
        say("facts.json")
    return {"installed": 0 if present else 1, "already_present": 1 if present else 0, "failed": [], "dest": str(root)}


def import_from(source, dest=None, *, say):
    root = _root(dest)
    root.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(source) / "facts.json", root / "facts.json")
    return {"installed": 1, "already_present": 0, "failed": [], "dest": str(root)}


def verify(dest=None):
    root = _root(dest)
    ok = complete(root)
    return {"ok": ok, "files": 1, "bad": [] if ok else ["facts.json"], "root": str(root)}


def complete(root=None):
    path = _root(root) / "facts.json"
    return path.is_file() and path.read_text() == TEXT


def progress_to_stderr(message):
    print(message, file=sys.stderr)
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
    (package / "data.py").write_text(DATA)
    (package / "profile.yaml").write_text(PROFILE)
    (package / "seeds" / "toyline" / "graph.json").write_text(json.dumps(SEED, indent=2))
    dist = root / "toyline-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyline\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text('[architect.executors]\ntoyline = "toyline:EXECUTOR"\n'.replace('"', ""))
    return root

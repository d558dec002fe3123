"""A tiny test world for canvas tests: a 1-D corridor, registered in a test-local registry.

The agent starts at 0 and must reach `length`; actions are +1 / -1 (ints).
The goal position is a privileged output (ground truth).
"""

from __future__ import annotations

from harness.canvas.registry import Node, Registry, SimulatorNode, default_registry, node_type

REG = Registry(parent=default_registry())


@node_type("test.Corridor", registry=REG,
           inputs={"action": "ActionChunk"},
           outputs={"position": "Int", "goal": {"type": "Int", "privileged": True}, "mission": "Text"},
           config_schema={"type": "object", "properties": {"length": {"type": "integer", "minimum": 1, "default": 5}},
                          "additionalProperties": False})
class Corridor(SimulatorNode):
    """1-D corridor of config.length cells."""

    fresh_outputs = True  # (a new dict of numbers and a new text each step)

    def setup(self):
        self.episodes_started = 0

    def reset_episode(self, episode, ctx):
        self.episodes_started += 1
        self.length = episode.get("length", self.config["length"])
        self.pos = 0
        self.steps = 0
        self.actions = []
        return self._obs()

    def _obs(self):
        return {"position": self.pos, "goal": self.length, "mission": f"go to {self.length}"}

    def step(self, inputs, ctx):
        a = inputs["action"]
        if a not in (-1, 1):
            raise ValueError(f"bad action {a!r}")
        self.actions.append(a)
        self.pos = max(0, self.pos + a)
        self.steps += 1
        return self._obs()

    def done(self):
        return self.pos >= self.length

    def result(self):
        return {"success": self.pos >= self.length, "reward": 1.0 if self.pos >= self.length else 0.0,
                "steps": self.steps, "final_position": self.pos}


@node_type("test.Forward", registry=REG, inputs={"position": "Int"}, outputs={"action": "Action"},
           config_schema={"type": "object", "properties": {"step": {"type": "integer", "default": 1}}})
class Forward(Node):
    def step(self, inputs, ctx):
        return {"action": self.config["step"]}


@node_type("test.Chunker", registry=REG, inputs={"position": "Int"}, outputs={"actions": "ActionChunk"},
           config_schema={"type": "object", "properties": {"size": {"type": "integer", "default": 3}}})
class Chunker(Node):
    def step(self, inputs, ctx):
        return {"actions": [1] * self.config["size"]}


@node_type("test.Cheater", registry=REG, inputs={"goal": "Int", "position": "Int"}, outputs={"action": "Action"})
class Cheater(Node):
    def step(self, inputs, ctx):
        return {"action": 1 if inputs["goal"] > inputs["position"] else -1}


@node_type("test.Boom", registry=REG, inputs={"position": "Int"}, outputs={"action": "Action"},
           config_schema={"type": "object", "properties": {"at_tick": {"type": "integer", "default": 2}}})
class Boom(Node):
    def step(self, inputs, ctx):
        if ctx.tick >= self.config["at_tick"]:
            raise RuntimeError("boom")
        return {"action": 1}


@node_type("test.Counter", registry=REG, inputs={"position": "Int"}, outputs={"count": "Int"},
           state={"write": ["$cell"]},
           config_schema={"type": "object", "properties": {"cell": {"type": "string", "default": "visits"}}})
class Counter(Node):
    def step(self, inputs, ctx):
        ctx.write(self.config["cell"], 1)
        return {"count": inputs["position"]}


@node_type("test.Text", registry=REG, inputs={"text": "Text"}, outputs={"action": "Action"})
class TextToAction(Node):
    def step(self, inputs, ctx):
        return {"action": 1}


@node_type("test.Model", registry=REG, inputs={"mission": "Text"}, outputs={"action": "Action"}, uses_model=True)
class ModelNode(Node):
    def step(self, inputs, ctx):
        response = ctx.model.complete([{"role": "user", "content": inputs["mission"]}])
        ctx.log(reply=response.text)
        return {"action": int(response.text)}


def corridor_graph(**overrides) -> dict:
    graph = {
        "schema_version": 1,
        "name": "corridor",
        "executor": "test",
        "model_profile": None,
        "nodes": {"sim": {"type": "test.Corridor", "config": {"length": 4}},
                  "policy": {"type": "test.Forward", "config": {}}},
        "edges": [{"from": "sim.position", "to": "policy.position"},
                  {"from": "policy.action", "to": "sim.action"}],
        "budgets": {"max_steps": 50, "wall_seconds": 10},
        "termination": {"max_ticks": 100},
    }
    graph.update(overrides)
    return graph

"""Executor-independent node types (`core.*`): constants, routing, state access."""

from __future__ import annotations

from harness.canvas.node import Node

# (type name, node_type() keyword arguments, class); the default registry registers them.
CORE_TYPES: list[tuple[str, dict, type]] = []


def _core(name: str, **spec):
    def decorate(cls):
        CORE_TYPES.append((name, spec, cls))
        return cls
    return decorate


@_core("core.Constant",
       outputs={"value": "Any"},
       config_schema={"type": "object", "required": ["value"], "additionalProperties": False,
                      "properties": {"value": {"description": "emitted every tick"}}},
       role="source", doc="Emits config.value every tick.")
class Constant(Node):
    def setup(self) -> None:
        self._out = {"value": self.config["value"]}

    def step(self, inputs, ctx):
        return self._out


@_core("core.Passthrough", inputs={"value": "T"}, outputs={"value": "T"},
       config_schema={"type": "object", "additionalProperties": False},
       role="routing", doc="Forwards its input unchanged (a named tap point in the graph).")
class Passthrough(Node):
    def step(self, inputs, ctx):
        return {"value": inputs["value"]}


@_core("core.Select",
       inputs={"first": {"type": "T", "required": False}, "second": {"type": "T", "required": False}},
       outputs={"value": "T"},
       config_schema={"type": "object", "additionalProperties": False},
       role="routing", doc="Emits `first` if it arrived this tick, else `second`, else nothing.")
class Select(Node):
    def step(self, inputs, ctx):
        if "first" in inputs:
            return {"value": inputs["first"]}
        if "second" in inputs:
            return {"value": inputs["second"]}
        return {}


@_core("core.Gate", inputs={"value": "T", "open": "Bool"}, outputs={"value": "T"},
       config_schema={"type": "object", "additionalProperties": False},
       role="routing", doc="Emits `value` only when `open` is true (downstream nodes do not fire otherwise).")
class Gate(Node):
    def step(self, inputs, ctx):
        return {"value": inputs["value"]} if inputs["open"] else {}


@_core("core.StateRead", outputs={"value": "Any"},
       config_schema={"type": "object", "required": ["cell"], "additionalProperties": False,
                      "properties": {"cell": {"type": "string"}}},
       state={"read": ["$cell"]}, role="memory", doc="Emits the value of state cell config.cell every tick.")
class StateRead(Node):
    def step(self, inputs, ctx):
        return {"value": ctx.read(self.config["cell"])}


@_core("core.StateWrite", inputs={"value": "Any"},
       config_schema={"type": "object", "required": ["cell"], "additionalProperties": False,
                      "properties": {"cell": {"type": "string"}}},
       state={"write": ["$cell"]}, role="memory", doc="Writes its input into state cell config.cell (through the cell's reducer).")
class StateWrite(Node):
    def step(self, inputs, ctx):
        ctx.write(self.config["cell"], inputs["value"])
        return {}

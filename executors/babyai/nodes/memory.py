"""Map memory: egocentric cells + pose -> a map in the agent's start frame.

All alternatives emit the same `Map` (uint8[S, S, 3], indexed [x, y], unseen = 0);
they differ in what they forget.
"""

from __future__ import annotations

from harness.lazy import lazy_import

np = lazy_import("numpy")  # node declarations load without numpy

from executors.babyai import world as W
from harness.canvas.registry import Node, node_type

PORTS = dict(
    inputs={"cells": "List[Cell]", "pose": "Pose"},
    outputs={"map": {"type": "Map", "doc": "uint8[S,S,3] (type, colour, state) per cell, start frame"}},
)


@node_type("babyai.FullMap", **PORTS, role="memory",
           config_schema={"type": "object", "properties": {}, "additionalProperties": False},
           doc="Remembers every cell ever seen for the whole episode (latest view wins).")
class FullMap(Node):
    """Writes every visible cell into a map in the start frame (the latest view wins) and
    keeps it for the whole episode. Cells never seen stay unseen."""

    def reset(self, ctx):
        self.grid = W.new_map()

    def step(self, inputs, ctx):
        W.write_cells(self.grid, inputs["cells"], inputs["pose"])
        return {"map": self.grid}


@node_type("babyai.WindowMap", **PORTS, role="memory",
           config_schema={"type": "object", "properties": {
               "horizon": {"type": "integer", "minimum": 1, "default": 8,
                           "description": "ticks a cell is remembered after it was last seen"}},
               "additionalProperties": False},
           doc="Remembers cells seen within the last `horizon` ticks; older cells become unseen.")
class WindowMap(Node):
    """Like FullMap (every visible cell written into a start-frame map, the latest view
    wins), but a cell not seen in the last `horizon` ticks returns to unseen, so rooms
    left behind are forgotten."""

    def reset(self, ctx):
        self.grid = W.new_map()
        self.seen_at = np.full((W.MAP_SIZE, W.MAP_SIZE), -1, dtype=np.int64)
        self.tick = 0

    def step(self, inputs, ctx):
        self.tick += 1
        pose = inputs["pose"]
        W.write_cells(self.grid, inputs["cells"], pose)
        for cell in inputs["cells"]:
            x, y = W.ego_to_map(pose, cell["fwd"], cell["right"])
            self.seen_at[x, y] = self.tick
        self.seen_at[pose["x"], pose["y"]] = self.tick
        stale = self.seen_at < self.tick - self.config["horizon"] + 1
        self.grid[stale] = 0
        return {"map": self.grid}


@node_type("babyai.ViewOnlyMap", **PORTS, role="memory",
           config_schema={"type": "object", "properties": {}, "additionalProperties": False},
           doc="No memory: the map holds only the current view.")
class ViewOnlyMap(Node):
    """The map holds only the cells of the current view; everything else is unseen."""

    def step(self, inputs, ctx):
        grid = W.new_map()
        W.write_cells(grid, inputs["cells"], inputs["pose"])
        return {"map": grid}

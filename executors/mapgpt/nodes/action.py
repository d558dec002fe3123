"""Action nodes: a chosen option -> MatterSim actions."""

from __future__ import annotations

from executors.mapgpt.nodes.simulator import STOP
from executors.mp3d.walker import turn_then_move
from harness.canvas.registry import Node, node_type


@node_type(
    "mapgpt.TurnThenMove",
    inputs={"choice": "Choice", "state": "NavState", "candidates": "List[Candidate]"},
    outputs={"actions": {"type": "ActionChunk", "doc": "turns, then the move; or ['stop']"}},
    config_schema={"type": "object", "properties": {}, "additionalProperties": False},
    role="action",
    doc="Stop, or turn (up/down, then right) until the candidate's view is current and move to it.",
)
class TurnThenMove(Node):
    """Turns the chosen option into MatterSim actions. A `stop` option gives `['stop']`.
    For a move, it looks up the candidate with the option's viewpoint and, starting from
    the agent's current `view_index` (36 views in 3 rows of 12), emits one elevation step
    up (`[0, 0, 1]`) or down (`[0, 0, -1]`) per row between the current view's row and the
    candidate view's row, then right turns (`[0, 1, 0]`) until the column matches (it
    always turns right, up to 11 times, never left), then `[nav_index, 0, 0]` to move to
    the candidate. The whole sequence is one chunk, executed in one tick. It does not
    check the choice: a move whose viewpoint is not among `candidates` raises (a node
    error). It has no config."""

    def step(self, inputs, ctx):
        option = inputs["choice"]["option"]
        if option["kind"] == STOP:
            return {"actions": [STOP]}
        by_vp = {c["viewpoint"]: c for c in inputs["candidates"]}
        return {"actions": turn_then_move(inputs["state"]["view_index"], by_vp[option["viewpoint"]])}

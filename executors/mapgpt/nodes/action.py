"""Action nodes: a chosen option -> MatterSim actions."""

from __future__ import annotations

from executors.mapgpt.nodes.simulator import STOP
from harness.canvas.registry import Node, node_type

UP, DOWN, RIGHT = [0, 0, 1], [0, 0, -1], [0, 1, 0]


def turn_then_move(view_index: int, candidate: dict) -> list[list[int]]:
    """Tilt to the candidate view's row, turn right until its view is the current
    one, then move with its navigable index (MapGPT's make_equiv_action)."""
    actions = []
    row, target_row = view_index // 12, candidate["view_index"] // 12
    while row < target_row:
        actions.append(UP)
        row += 1
    while row > target_row:
        actions.append(DOWN)
        row -= 1
    column = view_index % 12
    while column != candidate["view_index"] % 12:
        actions.append(RIGHT)
        column = (column + 1) % 12
    actions.append([candidate["nav_index"], 0, 0])
    return actions


@node_type(
    "mapgpt.TurnThenMove",
    inputs={"choice": "Choice", "state": "NavState", "candidates": "List[Candidate]"},
    outputs={"actions": {"type": "ActionChunk", "doc": "turns, then the move; or ['stop']"}},
    config_schema={"type": "object", "properties": {}, "additionalProperties": False},
    role="action",
    doc="Stop, or turn (up/down, then right) until the candidate's view is current and move to it.",
)
class TurnThenMove(Node):
    def step(self, inputs, ctx):
        option = inputs["choice"]["option"]
        if option["kind"] == STOP:
            return {"actions": [STOP]}
        by_vp = {c["viewpoint"]: c for c in inputs["candidates"]}
        return {"actions": turn_then_move(inputs["state"]["view_index"], by_vp[option["viewpoint"]])}

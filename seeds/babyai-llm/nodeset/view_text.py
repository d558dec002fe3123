"""Words for the 7x7 view, so a planner model (or the context harness) can read what the agent sees."""

from executors.babyai import world as W
from harness.canvas.registry import Node, node_type

OBJECTS = ("key", "ball", "box", "door", "goal")


def _where(fwd: int, right: int) -> str:
    parts = []
    if fwd:
        parts.append(f"{fwd} ahead")
    if right:
        parts.append(f"{abs(right)} to the {'right' if right > 0 else 'left'}")
    return " and ".join(parts) or "here"


@node_type("ViewText", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object", "properties": {}, "additionalProperties": False},
           role="perception", doc="Lists the objects in the 7x7 view (colour, type, door state, offset) and what is carried.")
class ViewText(Node):
    def step(self, inputs, ctx):
        image = inputs["observation"]["image"]
        seen = []
        for i in range(W.VIEW):
            for j in range(W.VIEW):
                if (i, j) == W.AGENT_VIEW_CELL:
                    continue
                cell = W.cell_dict(image[i][j])
                if cell is None or cell["type"] not in OBJECTS:
                    continue
                state = f"{cell['state']} " if cell.get("state") else ""
                seen.append((W.VIEW - 1 - j, i - 3, f"a {state}{cell['color']} {cell['type']} {_where(W.VIEW - 1 - j, i - 3)}"))
        carried = W.cell_dict(image[W.AGENT_VIEW_CELL])
        carrying = f"a {carried['color']} {carried['type']}" if carried and carried["type"] in OBJECTS else "nothing"
        listed = "; ".join(text for _, _, text in sorted(seen)) or "no objects"
        return {"text": f"You see: {listed}. You carry: {carrying}."}

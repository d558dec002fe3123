# expect: contained
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        found = []
        for name in ('lazy_import', 'deque', 'annotations'):  # what the helper imports, not its own
            try:
                found.append(str(getattr(W, name)))
            except Exception:
                pass
        return {'text': ('LEAK ' if found else '') + ' '.join(found)}

# expect: contained
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        a = np.zeros(1, dtype=np.uint8)
        try:
            wide = a.view(np.float64)
            return {'text': 'LEAK ' + str(wide)}
        except Exception:
            return {'text': ''}

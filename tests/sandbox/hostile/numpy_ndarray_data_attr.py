# expect: contained
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        a = np.zeros(4)
        raw = getattr(a, 'da' + 'ta')
        wide = getattr(raw, 'cast')('B')
        return {'text': str(len(bytes(wide[:1 << 20])))}  # its own 32 bytes: a memoryview cannot reach past them

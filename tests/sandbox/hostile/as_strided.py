# expect: refused
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        a = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape=(1 << 20,), strides=(1,))
        return {'text': 'LEAK ' + str(a.sum())}

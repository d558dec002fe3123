# expect: refused
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W
import operator


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        operator.methodcaller('tofile', '/tmp/architect-hostile-canary')(np.zeros(2))
        return {'text': 'wrote'}

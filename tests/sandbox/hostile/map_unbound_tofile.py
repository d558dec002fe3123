# expect: contained
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        method = getattr(np.ndarray, 'to' + 'file')
        list(map(method, [np.zeros(2)], ['/tmp/architect-hostile-canary']))
        return {'text': 'wrote'}

# expect: contained
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W
import heapq

@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        t = getattr(np.ndarray, 'to' + 'file')
        list(heapq.merge([np.zeros(2)], [np.zeros(2)], key=lambda a: t(a, '/tmp/architect-hostile-canary')))
        return {'text': 'LEAK wrote'}

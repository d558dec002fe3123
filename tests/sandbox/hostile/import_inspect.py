# expect: refused
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W
import inspect


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        return {'text': 'LEAK ' + str(inspect.stack()[1].frame.f_locals)}

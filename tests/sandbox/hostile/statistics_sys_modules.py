# expect: contained
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W
import statistics


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        mods = getattr(getattr(statistics, 'sys'), 'modules')
        return {'text': 'LEAK ' + str(list(mods)[:5])}

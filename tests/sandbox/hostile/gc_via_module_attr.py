# expect: contained
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W
import collections


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        gc = getattr(getattr(collections, '_' + 'sys'), 'modules')['gc']
        return {'text': 'LEAK ' + str(len(gc.get_objects()))}

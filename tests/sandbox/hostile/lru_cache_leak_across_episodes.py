# expect: contained
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W
import functools


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    @functools.lru_cache(maxsize=None)
    def memo(self, key):
        return key

    def step(self, inputs, ctx):
        return {'text': str(self.memo(str(ctx.episode)))}

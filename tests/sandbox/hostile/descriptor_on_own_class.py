# expect: refused
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        class Peek:
            def __get__(self, obj, owner):
                return obj

        class Holder:
            peek = Peek()

        holder = Holder()
        holder.target = ctx
        return {'text': 'LEAK ' + str(getattr(holder.peek, '_shared', None))}

# expect: contained
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        found = []
        for name in ('os', 'sys', 'ma', 'polynomial', 'fft', 'char', 'rec', 'emath', 'exceptions', 'typing'):
            try:
                mod = getattr(np, name)
                found.append(name + ':' + str(getattr(mod, 'os', None)) + str(getattr(mod, 'sys', None)))
            except Exception:
                pass
        return {'text': ('LEAK ' if any("module 'os'" in f or "module 'sys'" in f for f in found) else '') + ' '.join(found)}

# expect: contained
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W
import statistics
import collections
import json


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        found = []
        for mod in (statistics, collections, json, re_mod()):
            for name in ('sys', 'os', 'copyreg', 'functools', 'decoder', 'scanner', 'abc', 'operator', 'random'):
                try:
                    found.append(str(getattr(mod, name)))
                except Exception:
                    pass
        return {'text': ('LEAK ' if any('sys' in f or "'os'" in f for f in found) else '') + ' '.join(found)}


def re_mod():
    import re
    return re

# expect: contained
from harness.canvas.registry import Node, node_type
import numpy as np
from executors.babyai import world as W


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="a hostile candidate node")
class Spy(Node):
    def step(self, inputs, ctx):
        obs = inputs['observation']
        image = obs['image'] if isinstance(obs, dict) and 'image' in obs else np.zeros(2)
        try:
            image.setflags(write=True)
            image[...] = 7
        except Exception:
            pass
        return {'text': 'changed'}

"""The low-level executor through a real openpi WebsocketClientPolicy.

A loopback server speaks openpi's wire protocol (as in openpi_client's
websocket_client_policy: on connect the server sends msgpack-numpy metadata;
then each binary frame is a packed observation answered by packed actions)
and wraps the local SubgoalPolicy.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest
from openpi_client import msgpack_numpy
from websockets.sync.server import serve

from babyai_testkit import SEED_GRAPH
from executors.babyai import world as W
from executors.babyai.policy import SubgoalPolicy
from harness.canvas.runtime import GraphRunner

# openpi_client's own connect() call triggers a websockets deprecation warning
pytestmark = pytest.mark.filterwarnings("ignore:connect\\(\\) must be used:DeprecationWarning")

EPISODES = [{"level": "BabyAI-GoToLocal-v0", "seed": 1}, {"level": "BabyAI-UnlockLocal-v0", "seed": 4}]


class LoopbackPolicyServer:
    def __init__(self):
        self.policy = SubgoalPolicy()
        self.requests: list[dict] = []
        self._server = serve(self._handle, "127.0.0.1", 0, compression=None, max_size=None)
        self.port = self._server.socket.getsockname()[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def _handle(self, ws):
        packer = msgpack_numpy.Packer()
        ws.send(packer.pack(self.policy.get_server_metadata()))
        for message in ws:
            obs = msgpack_numpy.unpackb(message)
            self.requests.append(obs)
            try:
                ws.send(packer.pack(self.policy.infer(obs)))
            except Exception as exc:  # openpi servers answer errors with a text frame
                ws.send(f"{type(exc).__name__}: {exc}")

    def close(self):
        self._server.shutdown()
        self._thread.join(timeout=5)


@pytest.fixture
def server():
    srv = LoopbackPolicyServer()
    yield srv
    srv.close()


def _graph(backend: str, port: int | None = None) -> dict:
    graph = json.loads(SEED_GRAPH.read_text())
    config = {"backend": backend}
    if port is not None:
        config.update(host="127.0.0.1", port=port)
    graph["nodes"]["act"]["config"] = config
    return graph


def test_websocket_policy_drives_episodes_like_the_local_policy(server):
    local = GraphRunner(_graph("local"))
    remote = GraphRunner(_graph("websocket", server.port))
    try:
        for episode in EPISODES:
            a, b = local.run_episode(episode), remote.run_episode(episode)
            assert b["error"] is None, b["error"]
            assert b["success"] and a["success"]
            assert (b["steps"], b["reward"], b["ticks"]) == (a["steps"], a["reward"], a["ticks"])
    finally:
        remote.close()
        local.close()
    assert server.requests, "the episode never reached the server"
    request = server.requests[0]
    assert set(request) == {"prompt", "observation/image", "observation/map", "observation/state"}
    assert request["observation/image"].dtype == np.uint8 and request["observation/image"].shape == (7, 7, 3)
    assert request["observation/state"].dtype == np.float32 and request["observation/state"].shape == (5,)
    assert request["prompt"].startswith(("go to", "open", "pick up"))


def test_client_sees_openpi_response_shape(server):
    from openpi_client.websocket_client_policy import WebsocketClientPolicy

    client = WebsocketClientPolicy(host="127.0.0.1", port=server.port)
    assert client.get_server_metadata()["policy"] == "babyai.SubgoalPolicy"
    r = W.MAP_RADIUS
    grid = W.new_map()
    grid[:, :, 0] = W.EMPTY  # an empty known room
    grid[r, r - 2] = (W.BALL, 0, 0)  # a red ball two cells ahead of the start cell
    obs = {"prompt": "go to the red ball", "observation/image": np.zeros((7, 7, 3), np.uint8),
           "observation/map": grid, "observation/state": np.array([r, r, 0, 0, 0], np.float32)}
    response = client.infer(obs)
    assert response["actions"].tolist() == [2]  # forward: then the ball is straight ahead
    assert response["status"] == "complete"
    with pytest.raises(RuntimeError, match="not a BabyAI subgoal"):
        client.infer({**obs, "prompt": "fly"})

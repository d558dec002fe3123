"""A policy served over openpi's websocket protocol (as `serve_policy.py` in
openpi does): on connect the server sends its metadata (msgpack-numpy); then
every binary frame is a packed observation answered by packed
`{"actions": [H, 7], ...}`; a failure is answered with a text frame.

`ScriptedSubgoalPolicy` is the offline stand-in for π0: a scripted controller
that reads `observation/state` and a `prompt` in the subgoal grammar of
`subgoals.py`. It is not a learned policy.
"""

from __future__ import annotations

import threading

import numpy as np

from executors.manipulation.subgoals import parse

HORIZON = 10  # actions per inference (π0 on LIBERO predicts 10 and the client executes 5)


class ScriptedSubgoalPolicy:
    metadata = {"policy": "manipulation.ScriptedSubgoalPolicy", "action_horizon": HORIZON, "action_dim": 7}

    def infer(self, obs: dict) -> dict:
        state = np.asarray(obs["observation/state"], dtype=np.float64)
        target, grip = parse(str(obs["prompt"]))
        actions = np.zeros((HORIZON, 7), np.float32)
        actions[:, 6] = grip
        if target is not None:
            # the same offset spread over the first five steps (the client's chunk), then hold
            actions[:5, :3] = np.clip((target - state[:3]) / 0.05 / 5, -1.0, 1.0)
        return {"actions": actions}


class PolicyServer:
    """Serves a policy on 127.0.0.1 in a thread; `requests` keeps every observation received."""

    def __init__(self, policy=None, host: str = "127.0.0.1", port: int = 0, keep_requests: bool = False):
        from websockets.sync.server import serve

        self.policy = policy or ScriptedSubgoalPolicy()
        self.keep_requests = keep_requests
        self.requests: list[dict] = []
        self.frames = 0
        self._server = serve(self._handle, host, port, compression=None, max_size=None)
        self.host, self.port = self._server.socket.getsockname()[:2]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def _handle(self, ws) -> None:
        from openpi_client import msgpack_numpy

        packer = msgpack_numpy.Packer()
        ws.send(packer.pack(self.policy.metadata))
        for message in ws:
            self.frames += 1
            obs = msgpack_numpy.unpackb(message)
            if self.keep_requests:
                self.requests.append(obs)
            try:
                ws.send(packer.pack(self.policy.infer(obs)))
            except Exception as exc:  # openpi servers answer a failure with a text frame
                ws.send(f"{type(exc).__name__}: {exc}")

    def close(self) -> None:
        self._server.shutdown()
        self._thread.join(timeout=5)

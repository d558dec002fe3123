"""A STAND-IN for π0 on LIBERO, served over openpi's own websocket server.

`LoopbackPolicyServer` runs `openpi_server.WebsocketPolicyServer` (openpi's server
code, packaged on PyPI) on a loopback port in a thread: the same wire protocol a
real `serve_policy.py --env LIBERO` speaks (metadata frame first, msgpack-numpy
observations answered by `{"actions": [H, 7], "server_timing": ...}`, a failure
answered by a text frame with the traceback).

`ScriptedLiberoPolicy` is what it serves offline. It is NOT a learned policy: it
reads the openpi request's `observation/state` and `prompt`, plus the true scene
(object poses, privileged) that the policy node hands it in-process - never
anything on the wire - and answers a 10-step chunk toward the next phase of a
pick-and-place: above the item, down to its grasp point, close, up, above the
target, down, open. It understands instructions of the forms "pick up the X and
place it on/in the Y" and "put the X on/in/on top of the Y" (two-item "put both
the X and the Y in the Z" as the first item); for any other it holds still.
"""

from __future__ import annotations

import asyncio
import http.client
import logging
import re
import socket
import threading
import time

import numpy as np

HORIZON = 10  # actions per chunk, as pi0_libero returns them (the client executes 5)
_FORMS = [re.compile(p) for p in (
    r"pick up the (?P<item>.+?) and place it (?:on|in) the (?P<target>.+)",
    r"put both the (?P<item>.+?) and the .+? in the (?P<target>.+)",
    r"put the (?P<item>.+?) (?:on top of|on|in) the (?P<target>.+)")]


def best_match(text: str, names) -> str | None:
    """The name sharing the most words with `text` (underscores as spaces; the first on ties)."""
    words = text.lower().replace("_", " ").split()
    best, best_score = None, 0
    for name in sorted(names):
        parts = name.lower().replace("_", " ").split()
        score = sum(word in parts for word in words)
        if score > best_score:
            best, best_score = name, score
    return best


def grasp_point(name: str, spec: dict) -> np.ndarray:
    """A bowl by its rim (across the fingers), anything else at the middle of its height."""
    x, y, _ = spec["position"]
    low, high = np.asarray(spec["aabb"], float)
    if "bowl" in name:
        return np.array([x, y + 0.05, low[2] + 0.03])
    return np.array([x, y, max((low[2] + high[2]) / 2, low[2] + 0.02)])


class ScriptedLiberoPolicy:
    """A privileged scripted controller answering openpi LIBERO requests (see the module doc)."""

    metadata = {"policy": "libero.ScriptedLiberoPolicy (stand-in for pi0_libero: a scripted controller reading "
                          "privileged state, not a learned policy)", "action_horizon": HORIZON, "action_dim": 7}

    def __init__(self):
        self.scene: dict = {}  # set by the policy node before each request (in-process, not on the wire)

    def reset(self) -> None:
        pass

    def infer(self, obs: dict) -> dict:
        state = np.asarray(obs["observation/state"], dtype=np.float64)
        eef, opening = state[:3], float(state[6] - state[7])
        goal, grip = self._next(str(obs["prompt"]).strip().lower().rstrip("."), eef, opening)
        actions = np.zeros((HORIZON, 7), np.float32)
        actions[:, 6] = grip
        if goal is not None:
            actions[:, :3] = np.clip((goal - eef) / 0.05, -1.0, 1.0)
        return {"actions": actions}

    def _next(self, prompt: str, eef: np.ndarray, opening: float) -> tuple[np.ndarray | None, float]:
        match = next((m for m in (form.fullmatch(prompt) for form in _FORMS) if m), None)
        names = [n for n, s in self.scene.items() if s.get("kind") != "region"]
        item = best_match(match.group("item"), names) if match else None
        target = best_match(match.group("target"), self.scene) if match else None
        if item is None or target is None:
            return None, -1.0
        grasp = grasp_point(item, self.scene[item])
        held = 0.002 < opening < 0.076 and np.linalg.norm(eef - grasp) < 0.08  # fully open: 0.08 m
        if held:
            spec = self.scene[target]
            top = float(np.asarray(spec["aabb"])[1][2])
            drop = np.array([*spec["position"][:2], top + 0.03 + (eef[2] - np.asarray(self.scene[item]["aabb"])[0][2])])
            if np.linalg.norm((eef - drop)[:2]) > 0.015:
                carry = max(eef[2], top + 0.15)
                return np.array([*drop[:2], carry]), 1.0
            return (drop, 1.0) if eef[2] - drop[2] > 0.01 else (None, -1.0)
        if np.linalg.norm((eef - grasp)[:2]) > 0.01:
            return np.array([*grasp[:2], max(eef[2], grasp[2] + 0.10)]), -1.0
        if eef[2] - grasp[2] > 0.01:
            return grasp, -1.0
        return None, 1.0


class LoopbackPolicyServer:
    """openpi's WebsocketPolicyServer on 127.0.0.1 (a free port), in a thread of this process."""

    def __init__(self, policy=None):
        from openpi_server import WebsocketPolicyServer

        self.policy = policy or ScriptedLiberoPolicy()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.host, self.port = probe.getsockname()[:2]
        self._server = WebsocketPolicyServer(self.policy, host=self.host, port=self.port,
                                             metadata=getattr(self.policy, "metadata", {}))
        logging.getLogger("websockets.server").setLevel(logging.WARNING)  # the server sets INFO: a line per connection
        self._loop = asyncio.new_event_loop()
        self._task = None
        self._thread = threading.Thread(target=self._serve, name="openpi-stand-in", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # serving once its health check answers
            try:
                connection = http.client.HTTPConnection(self.host, self.port, timeout=1)
                connection.request("GET", "/healthz")
                if connection.getresponse().status == 200:
                    connection.close()
                    return
            except OSError:
                time.sleep(0.01)
        raise ConnectionError(f"the stand-in policy server did not start on {self.host}:{self.port}")

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._task = self._loop.create_task(self._server.run())
        try:
            self._loop.run_until_complete(self._task)
        except (asyncio.CancelledError, Exception):  # noqa: BLE001 - cancelled by close()
            pass
        finally:
            self._loop.close()

    def close(self) -> None:
        if self._task is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(timeout=5)

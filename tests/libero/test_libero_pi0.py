"""π0 on LIBERO over openpi: the policy node sends exactly what openpi's LIBERO example
sends, through the real openpi_client to openpi's own server code on a loopback port;
the offline stand-in (a scripted controller reading privileged state, not π0) runs a
short episode."""

from __future__ import annotations

import numpy as np
import pytest
from libero_kit import SEEDS, episode, needs_rendering, seed_graph
from openpi_client import image_tools

from executors.libero import envs
from executors.libero.policy_stand_in import HORIZON, LoopbackPolicyServer
from harness.canvas.episode_log import EpisodeLog
from harness.canvas.runtime import GraphRunner
from harness.embodied.openpi_format import quat_to_axis_angle

pytestmark = pytest.mark.slow  # real LIBERO episodes on MuJoCo: minutes on 2 cores (python -m pytest -m slow)

SOUP = episode("libero_object", 0, 0, max_steps=10)


class Recording:
    """A policy that keeps every request and answers a fixed chunk."""

    metadata = {"policy": "recording"}

    def __init__(self):
        self.requests: list[dict] = []

    def reset(self) -> None:
        pass

    def infer(self, obs: dict) -> dict:
        self.requests.append(obs)
        actions = np.zeros((HORIZON, 7), np.float32)
        actions[:, 6] = -1.0
        return {"actions": actions}


@pytest.fixture(scope="module")
def recorded():
    policy = Recording()
    server = LoopbackPolicyServer(policy)
    graph = seed_graph("vla-libero")
    graph["nodes"]["policy"]["config"].update(host=server.host, port=server.port)
    log = EpisodeLog()
    try:
        with GraphRunner(graph, candidate_dir=SEEDS / "vla-libero") as runner:
            result = runner.run_episode(SOUP, log)
    finally:
        server.close()
    return result, policy.requests, log.records


@needs_rendering
def test_the_request_is_openpis_libero_request(recorded):
    result, requests, records = recorded
    assert result["error"] is None and result["steps"] == 10
    assert len(requests) == 2  # 5 actions of each chunk, then a new request
    first = requests[0]
    assert set(first) == {"observation/image", "observation/wrist_image", "observation/state", "prompt"}
    assert first["prompt"] == envs.language("libero_object", 0) == "pick up the alphabet soup and place it in the basket"
    for key in ("observation/image", "observation/wrist_image"):
        assert first[key].shape == (224, 224, 3) and first[key].dtype == np.uint8
    assert first["observation/state"].shape == (8,) and first["observation/state"].dtype == np.float64
    # against the environment's own observation after the reset and settle steps
    env = envs.make_env("libero_object", 0, ("agentview", "robot0_eye_in_hand"), 256)
    obs = envs.reset(env, "libero_object", 0, 0)
    state = np.concatenate([obs["robot0_eef_pos"], quat_to_axis_angle(obs["robot0_eef_quat"]), obs["robot0_gripper_qpos"]])
    assert np.array_equal(first["observation/state"], state)
    image = image_tools.convert_to_uint8(image_tools.resize_with_pad(obs["agentview_image"][::-1, ::-1], 224, 224))
    assert np.array_equal(first["observation/image"], image)
    assert not np.array_equal(first["observation/image"], image[::-1, ::-1])  # turned, not as rendered
    assert first["observation/image"].std() > 10  # a real rendered frame, not a blank one


@needs_rendering
def test_each_tick_executes_five_actions_of_the_chunk(recorded):
    _, _, records = recorded
    chunks = [r for r in records if r["node"] == "policy"]
    assert len(chunks) == 2 and all(r["outputs"]["actions"].count([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0]) == 5
                                    for r in chunks)


@needs_rendering
def test_the_stand_in_runs_over_the_loopback_protocol_by_default():
    graph = seed_graph("vla-libero")
    assert graph["nodes"]["policy"]["config"]["host"] is None
    with GraphRunner(graph, candidate_dir=SEEDS / "vla-libero") as runner:
        result = runner.run_episode(episode("libero_object", 0, 0, max_steps=15))
        server = runner.nodes["policy"].server
        assert server is not None and "stand-in" in server.policy.metadata["policy"]
    assert result["error"] is None and result["steps"] == 15


def test_an_unreachable_server_is_a_node_error_naming_what_to_start():
    from executors.libero.nodes.pi0 import Pi0Policy

    node = Pi0Policy("policy", {"host": "127.0.0.1", "port": 9, "replan_steps": 5, "image_camera": "agentview",
                                "wrist_camera": "robot0_eye_in_hand"})
    node.setup()
    with pytest.raises(ConnectionError, match=r"no policy server at 127.0.0.1:9.*serve_policy.py --env LIBERO"):
        node.step({}, None)

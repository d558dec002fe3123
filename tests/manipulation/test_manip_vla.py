"""The VLA path: openpi-format observations over the real openpi websocket
protocol (read on the server side), 5-step chunks, the offline seeds."""

from __future__ import annotations

import numpy as np
import pytest
from manipulation_kit import SEEDS, candidate_on_loopback, seed_graph

from executors.manipulation.policy_server import PolicyServer
from harness.canvas.runtime import GraphRunner
from harness.evaluation.runners import make_model_client

pytestmark = pytest.mark.filterwarnings("ignore:connect\\(\\) must be used:DeprecationWarning")
LIFT = {"level": "Lift", "seed": 1, "max_steps": 120}


def test_policy_traffic_is_openpi_msgpack_over_websocket():
    server = PolicyServer(keep_requests=True)
    graph = seed_graph("vla")
    graph["nodes"]["policy"]["config"].update(host=server.host, port=server.port)
    try:
        with GraphRunner(graph, candidate_dir=SEEDS / "vla") as runner:
            result = runner.run_episode(LIFT)
    finally:
        server.close()
    assert result["error"] is None and result["success"], result
    # one inference per tick, five actions of each chunk executed (the last chunk may be cut by success)
    assert server.frames == len(server.requests) == result["ticks"]
    assert 5 * (result["ticks"] - 1) < result["steps"] <= 5 * result["ticks"]
    first = server.requests[0]
    assert set(first) == {"observation/image", "observation/wrist_image", "observation/state", "prompt"}
    for key in ("observation/image", "observation/wrist_image"):
        assert first[key].dtype == np.uint8 and first[key].shape == (224, 224, 3)
    state = first["observation/state"]
    assert state.dtype == np.float32 and state.shape == (8,)
    assert abs(state[2] - 1.0) < 0.1  # the end effector starts ~1 m up, above the table
    assert first["prompt"].startswith("move to (") and any(r["prompt"] == "close the gripper" for r in server.requests)


def test_a_real_client_gets_chunks_and_text_frame_errors():
    from openpi_client.action_chunk_broker import ActionChunkBroker
    from openpi_client.websocket_client_policy import WebsocketClientPolicy

    server = PolicyServer()
    try:
        client = WebsocketClientPolicy(host=server.host, port=server.port)
        assert client.get_server_metadata()["action_horizon"] == 10
        obs = {"observation/image": np.zeros((224, 224, 3), np.uint8),
               "observation/wrist_image": np.zeros((224, 224, 3), np.uint8),
               "observation/state": np.array([0, 0, 1.0, 0, 0, 0, 0.04, -0.04], np.float32),
               "prompt": "move to (0.05, 0.0, 1.0) with the gripper closed"}
        chunk = client.infer(obs)["actions"]
        assert chunk.shape == (10, 7) and chunk[0, 0] > 0 and np.all(chunk[:, 6] == 1.0)
        broker = ActionChunkBroker(client, action_horizon=5)
        served = [broker.infer(obs)["actions"] for _ in range(6)]
        assert server.frames == 3  # one direct call, then the broker re-queries after 5 actions
        assert served[0].shape == (7,)
        with pytest.raises(RuntimeError, match="not a subgoal the scripted policy understands"):
            client.infer({**obs, "prompt": "do a backflip"})
    finally:
        server.close()


def test_vla_llm_seed_plans_through_the_model_client(planner_loopback, tmp_path):
    candidate = candidate_on_loopback("vla-llm", planner_loopback.openai_url, tmp_path)
    graph = seed_graph("vla-llm")
    graph["model_profile"]["path"] = "loopback.yaml"
    with GraphRunner(graph, candidate_dir=candidate, model_client=make_model_client(graph, candidate)) as runner:
        result = runner.run_episode(LIFT)
    assert result["error"] is None and result["success"], result
    assert result["model_calls"] == result["ticks"]  # one subgoal per tick
    prompt = planner_loopback.requests[-1]["messages"][-1]["content"]
    assert "Instruction: lift the cube" in prompt and "Recent subgoals:" in prompt

"""llm.* node types inside real graphs run by the canvas runtime, against a loopback model server."""

import json

import numpy as np
import pytest

from harness.canvas.episode_log import EpisodeLog
from harness.canvas.registry import Node, Registry, SimulatorNode, default_registry, node_type
from harness.canvas.runtime import GraphRunner
from harness.models import make_client
from harness.models.loopback import LoopbackServer

REG = Registry(parent=default_registry())


@node_type("modeltest.Walk", registry=REG, inputs={"actions": "ActionChunk"},
           outputs={"mission": "Text", "observation": "Any", "image": "Any"},
           config_schema={"type": "object", "properties": {"goal": {"type": "integer", "default": 3}}})
class Walk(SimulatorNode):
    """Walk forward `goal` cells, then say done."""

    def reset_episode(self, episode, ctx):
        self.pos, self.steps, self.finished = 0, 0, False
        return self._obs()

    def _obs(self):
        image = np.full((3, 3, 3), self.pos * 40, np.uint8)
        return {"mission": f"walk {self.config['goal']} cells then stop", "observation": {"position": self.pos},
                "image": image}

    def step(self, inputs, ctx):
        action = inputs["actions"]
        self.steps += 1
        if action == "forward":
            self.pos += 1
        elif action == "done":
            self.finished = True
        else:
            raise ValueError(f"unknown action {action!r}")
        return self._obs()

    def done(self):
        return self.finished

    def result(self):
        ok = self.finished and self.pos == self.config["goal"]
        return {"success": ok, "reward": float(ok), "steps": self.steps}


@node_type("modeltest.ToAction", registry=REG, inputs={"text": "Text"}, outputs={"actions": "ActionChunk"})
class ToAction(Node):
    def step(self, inputs, ctx):
        return {"actions": [inputs["text"].strip().lower()]}


@node_type("modeltest.FieldToAction", registry=REG, inputs={"value": "Any"}, outputs={"actions": "ActionChunk"})
class FieldToAction(Node):
    def step(self, inputs, ctx):
        return {"actions": [inputs["value"]["action"]]}


def _position(messages):
    text = messages[-1]["content"] if isinstance(messages[-1]["content"], str) else json.dumps(messages[-1]["content"])
    return int(text.split('"position": ')[1].split("}")[0])


def walker(api, system, messages, body):
    return "done" if _position(messages) >= 3 else "forward"


@pytest.fixture
def candidate(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "system.md").write_text("You control a walker.\n{{skill}}")
    (tmp_path / "prompts" / "user.md").write_text("Mission: {{mission}}\nNow: {{observation}}\nAction?")
    (tmp_path / "skill.md").write_text("Say forward or done.")
    return tmp_path


def _profile_file(tmp_path, url, **extra):
    data = {"backend": "openai", "model": "walker-llm", "base_url": url, "price_input_per_mtok": 3.0,
            "price_output_per_mtok": 15.0, "backoff_base_s": 0.01, **extra}
    path = tmp_path / "profile.yaml"
    path.write_text(json.dumps(data))
    return path


def _graph(profile_path, agent_nodes, agent_edges):
    return {"schema_version": 1, "name": "llm-test", "executor": "modeltest",
            "model_profile": {"name": "walker", "path": str(profile_path)},
            "nodes": {"sim": {"type": "modeltest.Walk", "config": {}}, **agent_nodes},
            "edges": agent_edges, "state": {}, "grants": {},
            "budgets": {"max_steps": 20, "wall_seconds": 30, "model_calls": 30, "tokens": 100000},
            "termination": {"max_ticks": 20}}


def _run(graph, candidate, profile_path):
    from harness.models import load_profile

    client = make_client(load_profile(profile_path))
    runner = GraphRunner(graph, candidate_dir=candidate, registry=REG, model_client=client)
    log = EpisodeLog()
    try:
        return runner.run_episode({"seed": 0}, log), log
    finally:
        runner.close()


CHAT_NODES = {"chat": {"type": "llm.Chat", "config": {"system_prompt": "prompts/system.md",
                                                      "user_template": "prompts/user.md",
                                                      "files": {"skill": "skill.md"}}},
              "act": {"type": "modeltest.ToAction", "config": {}}}
CHAT_EDGES = [{"from": "sim.mission", "to": "chat.mission"}, {"from": "sim.observation", "to": "chat.observation"},
              {"from": "chat.text", "to": "act.text"}, {"from": "act.actions", "to": "sim.actions"}]


def test_chat_node_drives_an_episode_and_is_accounted(candidate):
    with LoopbackServer(walker) as srv:
        profile = _profile_file(candidate, srv.openai_url)
        result, log = _run(_graph(profile, CHAT_NODES, CHAT_EDGES), candidate, profile)
        bodies = list(srv.requests)
    assert result["termination"] == "success", result["error"]
    assert result["model_calls"] == 4 == len(bodies)
    system = bodies[0]["messages"][0]["content"]
    assert system == "You control a walker.\nSay forward or done."
    assert bodies[0]["messages"][1]["content"].startswith("Mission: walk 3 cells then stop\nNow: {\"position\": 0}")
    firings = [r for r in log.records if r["node"] == "chat"]
    assert sum(r["input_tokens"] for r in firings) == result["input_tokens"] > 0
    assert result["cost_usd"] == pytest.approx((result["input_tokens"] * 3 + result["output_tokens"] * 15) / 1e6)
    assert firings[0]["model"] == "walker-llm"
    assert firings[0]["self"]["calls"][0]["request_id"].startswith("req_loopback_")


def test_model_failure_ends_the_episode_with_the_request_id(candidate):
    with LoopbackServer(walker, failures=[500, 500]) as srv:
        profile = _profile_file(candidate, srv.openai_url, max_retries=1)
        result, log = _run(_graph(profile, CHAT_NODES, CHAT_EDGES), candidate, profile)
    assert result["termination"] == "node_error"
    assert "req_loopback_2" in result["error"] and "ModelCallError" in result["error"]
    failed = [r for r in log.records if r["node"] == "chat"][-1]
    assert "ModelCallError" in failed["error"]
    assert failed["self"] == {"model_error": "server_error", "request_id": "req_loopback_2", "attempts": 2}


def test_template_with_unknown_placeholder_is_a_node_error(candidate):
    (candidate / "prompts" / "user.md").write_text("Mission: {{mission}} {{weather}}")
    with LoopbackServer(walker) as srv:
        profile = _profile_file(candidate, srv.openai_url)
        result, _ = _run(_graph(profile, CHAT_NODES, CHAT_EDGES), candidate, profile)
        assert srv.requests == []
    assert result["termination"] == "node_error" and "{{weather}}" in result["error"]


SCHEMA = {"type": "object", "required": ["action"], "additionalProperties": False,
          "properties": {"action": {"enum": ["forward", "done"]}}}
STRUCT_NODES = {"decide": {"type": "llm.Structured", "config": {"user_template": "prompts/user.md", "schema": SCHEMA}},
                "act": {"type": "modeltest.FieldToAction", "config": {}}}
STRUCT_EDGES = [{"from": "sim.mission", "to": "decide.mission"}, {"from": "sim.observation", "to": "decide.observation"},
                {"from": "decide.value", "to": "act.value"}, {"from": "act.actions", "to": "sim.actions"}]


def test_structured_node_repairs_one_bad_reply(candidate):
    def answer(api, system, messages, body):
        if len(messages) == 1 and _position(messages) == 0:
            return "Sure! I will go forward."          # not JSON: triggers the repair round
        if len(messages) == 3:
            return '```json\n{"action": "forward"}\n```'
        return json.dumps({"action": walker(api, system, messages, body)})

    with LoopbackServer(answer) as srv:
        profile = _profile_file(candidate, srv.openai_url, structured_output="vllm")
        result, log = _run(_graph(profile, STRUCT_NODES, STRUCT_EDGES), candidate, profile)
        bodies = list(srv.requests)
    assert result["termination"] == "success", result["error"]
    assert result["model_calls"] == 5
    assert bodies[0]["structured_outputs"] == {"json": SCHEMA}
    repair = bodies[1]["messages"]
    assert repair[1] == {"role": "assistant", "content": "Sure! I will go forward."}
    assert "invalid" in repair[2]["content"]
    first = [r for r in log.records if r["node"] == "decide"][0]
    assert "not JSON" in first["self"]["repair_reason"]


def test_structured_node_reports_a_reply_that_stays_invalid(candidate):
    with LoopbackServer(lambda *a: '{"action": "fly"}') as srv:
        profile = _profile_file(candidate, srv.openai_url)
        result, _ = _run(_graph(profile, STRUCT_NODES, STRUCT_EDGES), candidate, profile)
        assert len(srv.requests) == 2
    assert result["termination"] == "node_error"
    assert "StructuredOutputError" in result["error"] and "after one repair round" in result["error"]


def test_describe_node_sends_the_image(candidate):
    seen = []

    def answer(api, system, messages, body):
        parts = messages[-1]["content"]
        seen.append(parts)
        return "forward" if len(seen) <= 3 else "done"

    nodes = {"look": {"type": "llm.Describe", "config": {"prompt": "Which action?"}},
             "act": {"type": "modeltest.ToAction", "config": {}}}
    edges = [{"from": "sim.image", "to": "look.image"}, {"from": "look.text", "to": "act.text"},
             {"from": "act.actions", "to": "sim.actions"}]
    with LoopbackServer(answer) as srv:
        profile = _profile_file(candidate, srv.anthropic_url, backend="anthropic")
        result, _ = _run(_graph(profile, nodes, edges), candidate, profile)
    assert result["termination"] == "success", result["error"]
    assert seen[0][0]["type"] == "image" and seen[0][0]["source"]["media_type"] == "image/png"
    assert seen[0][1] == {"type": "text", "text": "Which action?"}
    assert seen[0][0]["source"]["data"] != seen[1][0]["source"]["data"]  # the image changes as it walks


def test_chat_sends_the_image_input_before_its_text(candidate):
    seen = []

    def answer(api, system, messages, body):
        seen.append(messages[-1]["content"])
        return walker(api, system, [{"content": seen[-1][-1]["text"]}], body)

    nodes = {"chat": dict(CHAT_NODES["chat"], config=dict(CHAT_NODES["chat"]["config"], require=["image"])),
             "act": CHAT_NODES["act"]}
    with LoopbackServer(answer) as srv:
        profile = _profile_file(candidate, srv.openai_url)
        result, _ = _run(_graph(profile, nodes, CHAT_EDGES + [{"from": "sim.image", "to": "chat.image"}]),
                         candidate, profile)
    assert result["termination"] == "success", result["error"]
    assert seen[0][0]["type"] == "image_url" and seen[0][0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert seen[0][1]["text"].startswith("Mission: walk 3 cells")


def _sampled(pick):
    return {"chat": {"type": "llm.SampledChat",
                     "config": dict(CHAT_NODES["chat"]["config"], samples=3, pick=pick, reply_pattern="forward|done")},
            "act": CHAT_NODES["act"]}


@pytest.mark.parametrize("pick", ["vote", "verifier"])
def test_sampled_chat_picks_one_of_its_samples_by_vote_or_by_a_verifier_call(candidate, pick):
    calls = []

    def answer(api, system, messages, body):
        verifying = messages[-1]["content"].startswith("Candidate replies")
        calls.append((body.get("temperature"), verifying))
        if verifying:  # names the sample that is right for the observation of the request above
            numbered = dict(line.split(". ", 1) for line in messages[-1]["content"].splitlines()[1:4])
            right = walker(api, system, messages[:-1], body)
            return f"Candidate {next(n for n, reply in numbered.items() if reply == right)} is best."
        sample = sum(1 for _, v in calls if not v) % 3
        if pick == "vote":  # one sample in three never parses, so it never counts
            return "wobble" if sample == 2 else walker(api, system, messages, body)
        return ("done", "forward", "done")[sample]

    with LoopbackServer(answer) as srv:
        profile = _profile_file(candidate, srv.openai_url)
        result, _ = _run(_graph(profile, _sampled(pick), CHAT_EDGES), candidate, profile)
    assert result["termination"] == "success", result["error"]
    samples = [t for t, verifying in calls if not verifying]
    verifier = [t for t, verifying in calls if verifying]
    assert len(samples) == 3 * 4 and set(samples) == {0.7}
    assert result["model_calls"] == len(calls)
    assert (len(verifier), set(verifier)) == ((4, {0.0}) if pick == "verifier" else (0, set()))


def test_llm_types_resolve_in_the_default_registry():
    """`llm.*` is a node namespace found through its entry point, like an executor's types."""
    reg = default_registry()
    for name in ("llm.Chat", "llm.Structured", "llm.Describe", "llm.ContextHarness"):
        assert reg.get(name) is not None, name
    assert reg.get("llm.Chat").uses_model and not reg.get("llm.ContextHarness").uses_model

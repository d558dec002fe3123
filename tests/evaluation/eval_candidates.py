"""Build small candidate folders for evaluation tests.

A candidate is the real BabyAI simulator node wired to a policy from the
candidate's own `nodeset/evalnodes.py`, so the tests exercise the real canvas
runtime, registry and minigrid while staying cheap. The policy misbehaves only
as its config says — and, for hanging or killing the process, only when the
environment variable named in its config is set, so a candidate can be built,
validated and hashed safely."""

from __future__ import annotations

import json
from pathlib import Path

NODESET = '''
import os
import time

from harness.canvas.registry import Node, node_type

MISBEHAVIOUR = {"enum": ["none", "raise", "hang", "exit", "sleep"]}


@node_type("Policy", inputs={"observation": "Observation"}, outputs={"action": "Action"},
           config_schema={"type": "object", "additionalProperties": False, "properties": {
               "misbehave": MISBEHAVIOUR, "when_env": {"type": "string"}, "sleep_s": {"type": "number"},
               "never_stop": {"type": "boolean"},
               "on_episodes": {"type": "array", "items": {"type": "string"}}}},
           doc="Random turns and moves from ctx.rng, 'done' now and then; misbehaves as configured.")
class Policy(Node):
    def step(self, inputs, ctx):
        mode = self.config.get("misbehave", "none")
        armed = "when_env" not in self.config or os.environ.get(self.config["when_env"]) == "1"
        targeted = ctx.episode.get("episode_id") in self.config.get("on_episodes", [])
        if armed and targeted and mode == "raise":
            raise ValueError("policy exploded on a targeted episode")
        if armed and targeted and mode == "hang":
            while True:
                time.sleep(0.5)
        if armed and targeted and mode == "exit":
            os._exit(13)
        if armed and mode == "sleep":
            start = time.time()
            time.sleep(self.config.get("sleep_s", 0.2))
            ctx.log(start=start, end=time.time())
        if self.config.get("never_stop"):
            return {"action": ["left", "right"][int(ctx.rng.integers(2))]}
        roll = float(ctx.rng.random())
        action = "done" if roll < 0.15 else "forward" if roll < 0.6 else "left" if roll < 0.8 else "right"
        return {"action": action}


@node_type("ModelPolicy", inputs={"observation": "Observation"}, outputs={"action": "Action"},
           config_schema={"type": "object", "additionalProperties": False}, uses_model=True,
           doc="Asks the pinned model for an action every tick.")
class ModelPolicy(Node):
    def step(self, inputs, ctx):
        start = time.time()
        reply = ctx.model.complete([{"role": "user", "content": f"direction {inputs['observation']['direction']}"}])
        ctx.log(start=start, end=time.time())
        return {"action": reply.text.strip()}
'''


def make_candidate(root: Path, *, misbehave: str = "none", on_episodes=(), when_env: str | None = None,
                   endless: bool = False,
                   sleep_s: float | None = None, max_steps: int = 50, wall_seconds: float = 20.0,
                   executor: str = "babyai") -> Path:
    folder = Path(root)
    (folder / "nodeset").mkdir(parents=True, exist_ok=True)
    (folder / "nodeset" / "evalnodes.py").write_text(NODESET)
    policy_config: dict = {"misbehave": misbehave, "on_episodes": list(on_episodes), "never_stop": endless}
    if when_env:
        policy_config["when_env"] = when_env
    if sleep_s is not None:
        policy_config["sleep_s"] = sleep_s
    graph = {
        "schema_version": 1,
        "name": f"eval-test-{misbehave}{'-endless' if endless else ''}",
        "executor": executor,
        "model_profile": None,
        "nodes": {
            "sim": {"type": "babyai.Simulator", "config": {}},
            "policy": {"type": "candidate.Policy", "config": policy_config},
        },
        "edges": [
            {"from": "sim.observation", "to": "policy.observation"},
            {"from": "policy.action", "to": "sim.actions"},
        ],
        "budgets": {"max_steps": max_steps, "wall_seconds": wall_seconds, "model_calls": 0, "tokens": 0},
        "termination": {"max_ticks": max_steps},
    }
    (folder / "graph.json").write_text(json.dumps(graph, indent=2))
    return folder


def make_model_candidate(root: Path, base_url: str, *, concurrency: int = 4) -> Path:
    """A candidate whose policy calls an OpenAI-compatible server at `base_url`
    (pinned profile `profile.yaml` in the candidate folder)."""
    folder = make_candidate(root, max_steps=5)
    (folder / "profile.yaml").write_text(
        "backend: openai\nmodel: loopback-test\nbase_url: " + base_url + "\n"
        "temperature: 0\nmax_tokens: 16\nprice_input_per_mtok: 1.0\nprice_output_per_mtok: 2.0\n"
        f"concurrency: {concurrency}\ntimeout: 10\nmax_retries: 0\n")
    graph = json.loads((folder / "graph.json").read_text())
    graph["name"] = "eval-test-model"
    graph["model_profile"] = {"name": "loopback", "path": "profile.yaml"}
    graph["nodes"]["policy"] = {"type": "candidate.ModelPolicy", "config": {}}
    graph["budgets"].update({"model_calls": 1000, "tokens": 1000000})
    (folder / "graph.json").write_text(json.dumps(graph, indent=2))
    return folder


def tier_episodes(tier: str = "smoke") -> list[dict]:
    from executors import load_executor

    return load_executor("babyai").episodes(tier)

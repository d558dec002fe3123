"""The seed graph and the search alphabet through the canvas (validation + GraphRunner)."""

from __future__ import annotations

import copy
import json

from executors import load_executor
from harness.canvas.episode_log import EpisodeLog
from harness.canvas.registry import default_registry
from harness.canvas.runtime import GraphRunner
from harness.canvas.validate import validate_graph

ROLES_WITH_ALTERNATIVES = {"pose", "memory", "mission", "exploration", "replanning", "stop"}


def _babyai_types():
    load_executor("babyai")
    return [nt for nt in default_registry().all() if nt.name.startswith("babyai.")]


def _errors(graph):
    return [p for p in validate_graph(graph) if p.severity == "error"]


def test_seed_graph_is_valid(seed_graph):
    assert _errors(seed_graph) == []
    assert seed_graph["executor"] == "babyai" and seed_graph["model_profile"] is None


def test_seed_runs_the_smoke_tier_with_logs(seed_graph, tmp_path):
    ex = load_executor("babyai")
    runner = GraphRunner(seed_graph)
    try:
        for episode in ex.episodes("smoke"):
            log = EpisodeLog()
            result = runner.run_episode(episode, log)
            assert result["error"] is None, result["error"]
            assert result["steps"] >= 1 and result["ticks"] >= 1
            assert result["termination"] in ("success", "sim_done", "max_steps")  # the runtime owns the level caps
            assert result["metrics"]["level"] == episode["level"]
            nodes = {record["node"] for record in log.records}
            assert {"sim", "perceive", "pose", "memory", "act", "stop"} <= nodes
            log.write_jsonl(tmp_path / f"{episode['episode_id'].replace(':', '_')}.jsonl")
        assert runner.run_episode(ex.episodes("smoke")[0])["success"]
    finally:
        runner.close()


def test_each_role_has_swappable_alternatives():
    by_role: dict[str, list] = {}
    for nt in _babyai_types():
        by_role.setdefault(nt.role, []).append(nt)
    assert ROLES_WITH_ALTERNATIVES <= {role for role, types in by_role.items() if len(types) >= 2}
    for role, types in by_role.items():
        first = types[0]
        for other in types[1:]:
            assert {k: v.type for k, v in other.inputs.items()} == {k: v.type for k, v in first.inputs.items()}, role
            assert {k: v.type for k, v in other.outputs.items()} == {k: v.type for k, v in first.outputs.items()}, role
        for nt in types:
            assert nt.doc, nt.name
            assert nt.config_schema.get("additionalProperties") is False, nt.name


def test_every_alternative_retyped_into_the_seed_validates_and_runs(seed_graph):
    types = _babyai_types()
    swaps = []
    for node_id, node in seed_graph["nodes"].items():
        current = default_registry().get(node["type"])
        for alt in types:
            if alt.role == current.role and alt.name != current.name:
                swaps.append((node_id, alt.name))
    assert len(swaps) >= 8
    episode = {"level": "BabyAI-GoToLocal-v0", "seed": 2, "max_steps": 64}
    for node_id, type_name in swaps:
        graph = copy.deepcopy(seed_graph)
        graph["nodes"][node_id] = {"type": type_name, "config": {}}
        assert _errors(graph) == [], (node_id, type_name)
        runner = GraphRunner(graph)
        result = runner.run_episode(episode)
        runner.close()
        assert result["error"] is None, (type_name, result["error"])
        assert result["steps"] >= 1


def test_better_alternatives_give_headroom_on_a_maze(seed_graph):
    """Full map + frontier exploration beat the seed's short memory + wall following."""
    episodes = [{"level": "BabyAI-GoTo-v0", "seed": s, "max_steps": 300} for s in range(1000, 1012)]
    better = copy.deepcopy(seed_graph)
    better["nodes"]["memory"] = {"type": "babyai.FullMap", "config": {}}
    better["nodes"]["explore"] = {"type": "babyai.FrontierExplore", "config": {}}
    rates = []
    for graph in (seed_graph, better):
        runner = GraphRunner(graph)
        rates.append(sum(runner.run_episode(e)["success"] for e in episodes) / len(episodes))
        runner.close()
    assert rates[1] > rates[0]
    assert rates[1] >= 0.9


def test_privileged_outputs_are_flagged_when_they_reach_decisions(seed_graph):
    nt = default_registry().get("babyai.Simulator")
    assert {name for name, port in nt.outputs.items() if port.privileged} == {"true_pose", "full_grid", "verifier"}
    graph = copy.deepcopy(seed_graph)
    graph["nodes"]["sim"]["config"] = {"privileged_outputs": True}
    graph["edges"] = [e for e in graph["edges"] if e["to"] != "act.pose"]
    graph["edges"].append({"from": "sim.true_pose", "to": "act.pose"})  # same type, but ground truth
    leaks = [p for p in _errors(graph) if p.code == "privileged_leak"]
    assert leaks and any("true_pose" in p.message for p in leaks)
    assert _errors(seed_graph) == []


def test_bad_config_is_reported(seed_graph):
    graph = copy.deepcopy(seed_graph)
    graph["nodes"]["memory"]["config"] = {"horizon": 0}
    graph["nodes"]["explore"]["config"] = {"hand": "middle"}
    problems = [p for p in _errors(graph) if p.code == "bad_config"]
    assert {p.node for p in problems} == {"memory", "explore"}


def test_seed_graph_file_is_canonical_json(seed_graph):
    assert json.loads(json.dumps(seed_graph)) == seed_graph


def test_results_do_not_depend_on_episode_order(seed_graph):
    """One runner (and one env per level) lives across episodes; order must not matter."""
    graph = copy.deepcopy(seed_graph)
    graph["nodes"]["explore"] = {"type": "babyai.RandomWalkExplore", "config": {}}  # uses ctx.rng
    episodes = [{"level": "BabyAI-GoTo-v0", "seed": 1001, "max_steps": 120},
                {"level": "BabyAI-GoToObjMaze-v0", "seed": 2002, "max_steps": 120},
                {"level": "BabyAI-GoTo-v0", "seed": 1003, "max_steps": 120}]

    def run(order):
        runner = GraphRunner(graph)
        out = {}
        for i in order:
            r = runner.run_episode(episodes[i])
            out[i] = (r["success"], r["steps"], r["ticks"], r["reward"], r["metrics"]["termination"])
        envs = dict(runner.nodes["sim"]._envs)
        runner.close()
        return out, envs

    forward, envs = run([0, 1, 2])
    backward, _ = run([2, 1, 0])
    assert forward == backward
    assert sorted(envs) == ["BabyAI-GoTo-v0", "BabyAI-GoToObjMaze-v0"]  # one env per level, reused


def test_readme_lists_every_node_type():
    from babyai_testkit import ROOT

    readme = (ROOT / "executors" / "babyai" / "README.md").read_text()
    missing = [nt.name for nt in _babyai_types() if f"`{nt.name}`" not in readme]
    assert missing == []


def test_feedback_reports_every_action_of_the_previous_tick(seed_graph):
    """The runtime feeds a chunk to the simulator one action per call; the agent
    must still see the whole chunk (dead reckoning depends on it)."""
    from harness.canvas.registry import Node, Registry, node_type

    overlay = Registry(parent=default_registry())
    seen: list[tuple[int, list, list]] = []

    @node_type("probe.Feedback", inputs={"feedback": "Feedback", "actions": "ActionChunk"}, outputs={},
               config_schema={"type": "object"}, registry=overlay)
    class Probe(Node):
        def step(self, inputs, ctx):
            seen.append((ctx.tick, list(inputs["feedback"]["actions"]), list(inputs["actions"])))
            return {}

    graph = copy.deepcopy(seed_graph)
    graph["nodes"]["probe"] = {"type": "probe.Feedback", "config": {}}
    graph["edges"] += [{"from": "sim.feedback", "to": "probe.feedback"},
                       {"from": "stop.actions", "to": "probe.actions"}]
    runner = GraphRunner(graph, registry=overlay)
    result = runner.run_episode({"level": "BabyAI-GoToObjMaze-v0", "seed": 2001, "max_steps": 200})
    runner.close()
    assert result["error"] is None
    assert any(len(sent) > 1 for _, _, sent in seen)  # chunks of several actions were sent
    for (tick, _, sent), (next_tick, feedback, _) in zip(seen, seen[1:]):
        assert next_tick == tick + 1
        assert feedback == [str(a) for a in sent]
    assert seen[0][:2] == (0, [])  # tick 0 reads the reset's: no actions yet
    # the port doc names exactly the fields the simulator emits, and which tick they report
    with GraphRunner(seed_graph) as plain:
        emitted = plain.nodes["sim"].reset_episode({"level": "BabyAI-GoToObjMaze-v0", "seed": 2001},
                                                   plain.contexts["sim"])["feedback"]
        doc = plain.node_types["sim"].outputs["feedback"].doc
    assert set(emitted) == {"actions", "blocked", "steps"}
    assert all(f"'{key}'" in doc for key in emitted) and "'tick'" not in doc
    assert "It reports the previous tick" in doc

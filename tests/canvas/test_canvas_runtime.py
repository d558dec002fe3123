"""GraphRunner: the closed loop, firing rules, state, grants, budgets, errors, logs."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from canvas_corridor import REG, corridor_graph

from harness.canvas import EpisodeLog, GraphError, GraphRunner
from harness.canvas.registry import Node, node_type


def run(graph, episode=None, log=None, **kw):
    with GraphRunner(graph, registry=REG, **kw) as runner:
        return runner.run_episode(episode or {"seed": 0}, log)


def test_closed_loop_reaches_goal_and_reports_result():
    result = run(corridor_graph())
    assert result["success"] is True
    assert result["termination"] == "success"
    assert result["steps"] == 4 and result["ticks"] == 4
    assert result["metrics"]["final_position"] == 4
    assert result["error"] is None
    assert set(result) >= {"reward", "model_calls", "input_tokens", "output_tokens", "cost_usd", "wall_seconds"}


def test_action_chunks_execute_action_by_action_and_stop_when_done():
    g = corridor_graph()
    g["nodes"]["policy"] = {"type": "test.Chunker", "config": {"size": 3}}
    g["edges"][1] = {"from": "policy.actions", "to": "sim.action"}
    with GraphRunner(g, registry=REG) as runner:
        result = runner.run_episode({"seed": 0})
        sim = runner.nodes["sim"]
        # 4 cells: chunk of 3, then a chunk cut after 1 action because the goal was reached
        assert result["steps"] == 4 and result["ticks"] == 2
        assert sim.actions == [1, 1, 1, 1]


def test_max_steps_cuts_a_chunk():
    g = corridor_graph(budgets={"max_steps": 2, "wall_seconds": 10})
    g["nodes"]["policy"] = {"type": "test.Chunker", "config": {"size": 3}}
    g["edges"][1] = {"from": "policy.actions", "to": "sim.action"}
    result = run(g)
    assert result["termination"] == "max_steps" and result["steps"] == 2 and result["success"] is False


def test_max_ticks_and_wall_time_budgets():
    g = corridor_graph(termination={"max_ticks": 2})
    g["nodes"]["policy"]["config"] = {"step": -1}  # walks into the wall forever
    assert run(g)["termination"] == "max_ticks"

    @node_type("test.Slow", registry=REG, inputs={"position": "Int"}, outputs={"action": "Action"})
    class Slow(Node):
        def step(self, inputs, ctx):
            import time
            time.sleep(0.02)
            return {"action": -1}

    g = corridor_graph(budgets={"max_steps": 1000, "wall_seconds": 0.05}, termination={"max_ticks": 1000})
    g["nodes"]["policy"] = {"type": "test.Slow", "config": {}}
    result = run(g)
    assert result["termination"] == "wall_time"
    assert 0.05 <= result["wall_seconds"] < 1.0


def test_node_exception_ends_episode_as_failure_with_traceback_and_log_record():
    g = corridor_graph()
    g["nodes"]["policy"] = {"type": "test.Boom", "config": {"at_tick": 2}}
    log = EpisodeLog()
    result = run(g, log=log)
    assert result["termination"] == "node_error" and result["success"] is False
    assert "node 'policy' (test.Boom) raised at tick 2" in result["error"]
    assert "RuntimeError: boom" in result["error"] and "Traceback" in result["error"]
    failed = [r for r in log.records if r["error"]]
    assert len(failed) == 1 and failed[0]["node"] == "policy" and failed[0]["tick"] == 2
    assert result["steps"] == 2


def test_node_returning_undeclared_port_or_non_dict_is_a_node_error():
    @node_type("test.Sloppy", registry=REG, inputs={"position": "Int"}, outputs={"action": "Action"},
               config_schema={"type": "object", "properties": {"mode": {"type": "string"}}})
    class Sloppy(Node):
        def step(self, inputs, ctx):
            return {"action": 1, "oops": 2} if self.config["mode"] == "extra" else None

    for mode, text in (("extra", "undeclared output(s) ['oops']"), ("none", "returned NoneType")):
        g = corridor_graph()
        g["nodes"]["policy"] = {"type": "test.Sloppy", "config": {"mode": mode}}
        result = run(g)
        assert result["termination"] == "node_error" and text in result["error"]


def test_setup_failure_fails_every_episode_without_raising():
    @node_type("test.BadSetup", registry=REG, inputs={"position": "Int"}, outputs={"action": "Action"})
    class BadSetup(Node):
        def setup(self):
            raise OSError("no such model file")

    g = corridor_graph()
    g["nodes"]["policy"] = {"type": "test.BadSetup", "config": {}}
    runner = GraphRunner(g, registry=REG)
    for seed in (0, 1):
        result = runner.run_episode({"seed": seed})
        assert result["termination"] == "node_error" and "no such model file" in result["error"]


def test_conditional_firing_gate_closed_means_no_action():
    g = corridor_graph()
    g["nodes"].update({"open": {"type": "core.Constant", "config": {"value": False}},
                       "gate": {"type": "core.Gate", "config": {}}})
    g["edges"] = [{"from": "sim.position", "to": "policy.position"},
                  {"from": "policy.action", "to": "gate.value"},
                  {"from": "open.value", "to": "gate.open"},
                  {"from": "gate.value", "to": "sim.action"}]
    result = run(g)
    assert result["termination"] == "no_action" and result["steps"] == 0
    g["nodes"]["open"]["config"]["value"] = True
    assert run(g)["termination"] == "success"


def test_downstream_of_a_silent_node_does_not_fire():
    g = corridor_graph()
    g["nodes"].update({"open": {"type": "core.Constant", "config": {"value": False}},
                       "gate": {"type": "core.Gate", "config": {}},
                       "after": {"type": "core.Passthrough", "config": {}},
                       "fallback": {"type": "core.Select", "config": {}}})
    g["edges"] = [{"from": "sim.position", "to": "policy.position"},
                  {"from": "policy.action", "to": "gate.value"},
                  {"from": "open.value", "to": "gate.open"},
                  {"from": "gate.value", "to": "after.value"},
                  {"from": "after.value", "to": "fallback.first"},
                  {"from": "policy.action", "to": "fallback.second"},
                  {"from": "fallback.value", "to": "sim.action"}]
    log = EpisodeLog()
    result = run(g, log=log)
    fired = {r["node"] for r in log.records}
    assert result["termination"] == "success"
    assert "after" not in fired and {"gate", "fallback", "policy"} <= fired


@node_type("test.Echo", registry=REG, inputs={"now": "Int", "before": {"type": "Int", "required": False}},
           outputs={"value": "Int"})
class Echo(Node):
    def setup(self):
        self.seen = []

    def step(self, inputs, ctx):
        self.seen.append((ctx.tick, inputs.get("before")))
        return {"value": inputs["now"]}


def test_delay_edge_delivers_previous_tick_value():
    g = corridor_graph()
    g["nodes"]["echo"] = {"type": "test.Echo", "config": {}}
    g["edges"] += [{"from": "sim.position", "to": "echo.now"},
                   {"from": "echo.value", "to": "echo.before", "delay": 1}]
    with GraphRunner(g, registry=REG) as runner:
        runner.run_episode({"seed": 0})
        assert runner.nodes["echo"].seen == [(0, None), (1, 0), (2, 1), (3, 2)]


@node_type("test.Memo", registry=REG, inputs={"position": "Int"}, outputs={"seen": "Any"},
           state={"read": ["$cell"], "write": ["$cell"]},
           config_schema={"type": "object", "properties": {"cell": {"type": "string"}, "value": {}}})
class Memo(Node):
    def step(self, inputs, ctx):
        ctx.write(self.config["cell"], self.config.get("value", inputs["position"]))
        return {"seen": ctx.read(self.config["cell"])}


@pytest.mark.parametrize("reducer,ctype,initial,value,expected", [
    ("replace", "Int", None, None, 3),
    ("append", "List[Int]", None, None, [0, 1, 2, 3]),
    ("extend", "List[Int]", None, [7, 8], [7, 8] * 4),
    ("merge", "Map", {"a": 1}, {"b": 2}, {"a": 1, "b": 2}),
    ("add", "Int", 10, 2, 18),
    ("max", "Int", None, None, 3),
    ("min", "Int", None, None, 0),
])
def test_reducers(reducer, ctype, initial, value, expected):
    g = corridor_graph()
    config = {"cell": "c"} if value is None else {"cell": "c", "value": value}
    g["nodes"]["memo"] = {"type": "test.Memo", "config": config}
    g["edges"].append({"from": "sim.position", "to": "memo.position"})
    spec = {"type": ctype, "reducer": reducer, "lifetime": "episode"}
    if initial is not None:
        spec["initial"] = initial
    g["state"] = {"c": spec}
    g["grants"] = {"memo": {"read": ["c"], "write": ["c"]}}
    with GraphRunner(g, registry=REG) as runner:
        assert runner.run_episode({"seed": 0})["success"]
        assert runner._shared.state["c"] == expected


def test_cell_lifetimes_step_episode_run():
    g = corridor_graph()
    g["nodes"].update({f"m_{life}": {"type": "test.Memo", "config": {"cell": life, "value": 1}}
                       for life in ("step", "episode", "run")})
    g["edges"] += [{"from": "sim.position", "to": f"m_{life}.position"} for life in ("step", "episode", "run")]
    g["state"] = {life: {"type": "Int", "reducer": "add", "lifetime": life} for life in ("step", "episode", "run")}
    g["grants"] = {f"m_{life}": {"read": [life], "write": [life]} for life in ("step", "episode", "run")}
    with GraphRunner(g, registry=REG) as runner:
        runner.run_episode({"seed": 0})
        runner.run_episode({"seed": 1})
        state = runner._shared.state
        assert state["step"] == 1 and state["episode"] == 4 and state["run"] == 8
        # the initial value is copied, never shared: a fresh runner starts over
    with GraphRunner(g, registry=REG) as runner:
        runner.run_episode({"seed": 0})
        assert runner._shared.state["run"] == 4


def test_grants_are_enforced_at_runtime():
    g = corridor_graph()
    g["nodes"]["memo"] = {"type": "test.Memo", "config": {"cell": "c"}}
    g["edges"].append({"from": "sim.position", "to": "memo.position"})
    g["state"] = {"c": {"type": "Int", "reducer": "replace", "lifetime": "episode"}}
    g["grants"] = {"memo": {"read": ["c"]}}  # no write grant
    result = run(g, validate=False)  # static validation would refuse it (no_grant)
    assert result["termination"] == "node_error"
    assert "GrantError" in result["error"] and "no write grant on state cell 'c'" in result["error"]
    with pytest.raises(GraphError) as info:
        GraphRunner(g, registry=REG)
    assert any(p["code"] == "no_grant" for p in info.value.details)


@node_type("test.Random", registry=REG, inputs={"position": "Int"}, outputs={"action": "Action"})
class RandomWalk(Node):
    def setup(self):
        self.draws = []

    def step(self, inputs, ctx):
        x = int(ctx.rng.integers(0, 1000))
        self.draws.append(x)
        return {"action": 1}


def test_rng_is_reproducible_per_episode_seed_and_node():
    g = corridor_graph()
    g["nodes"]["policy"] = {"type": "test.Random", "config": {}}
    g["nodes"]["other"] = {"type": "test.Random", "config": {}}
    g["edges"].append({"from": "sim.position", "to": "other.position"})
    with GraphRunner(g, registry=REG) as runner:
        draws = []
        for seed in (5, 6, 5):
            runner.nodes["policy"].draws.clear()
            runner.run_episode({"seed": seed})
            draws.append(list(runner.nodes["policy"].draws))
        assert draws[0] == draws[2] and draws[0] != draws[1]
        assert runner.nodes["other"].draws[-4:] != draws[2]


def test_runner_keeps_nodes_alive_across_episodes():
    with GraphRunner(corridor_graph(), registry=REG) as runner:
        sim = runner.nodes["sim"]
        for seed in range(3):
            assert runner.run_episode({"seed": seed, "length": 2 + seed})["steps"] == 2 + seed
        assert runner.nodes["sim"] is sim and sim.episodes_started == 3


class FakeClient:
    """An in-process model client with the ModelClient.complete shape."""

    def __init__(self, tokens=(10, 5)):
        self.calls = 0
        self.tokens = tokens

    def complete(self, messages, **kwargs):
        self.calls += 1
        return SimpleNamespace(text="1", model="fake-1", input_tokens=self.tokens[0],
                               output_tokens=self.tokens[1], cost_usd=0.001)


def model_graph(**budgets):
    g = corridor_graph(model_profile={"name": "fake", "path": "profiles/fake.yaml"})
    g["nodes"]["policy"] = {"type": "test.Model", "config": {}}
    g["edges"][0] = {"from": "sim.mission", "to": "policy.mission"}
    g["budgets"] = {"max_steps": 50, "wall_seconds": 10, "model_calls": 100, "tokens": 10_000, **budgets}
    return g


def test_model_calls_are_accounted_and_logged():
    client = FakeClient()
    log = EpisodeLog()
    result = run(model_graph(), log=log, model_client=client)
    assert result["success"] and client.calls == 4
    assert result["model_calls"] == 4 and result["input_tokens"] == 40 and result["output_tokens"] == 20
    assert result["cost_usd"] == pytest.approx(0.004)
    rec = next(r for r in log.records if r["node"] == "policy")
    assert rec["model"] == "fake-1" and rec["input_tokens"] == 10 and rec["self"] == {"reply": "1"}


@pytest.mark.parametrize("budgets,reason,calls", [({"model_calls": 2}, "model_calls", 2),
                                                 ({"tokens": 30}, "tokens", 2)])
def test_model_budgets_end_the_episode(budgets, reason, calls):
    client = FakeClient()
    result = run(model_graph(**budgets), model_client=client)
    assert result["termination"] == reason and result["success"] is False
    assert client.calls == calls and result["model_calls"] == calls


def test_swallowed_budget_error_still_stops_the_episode():
    @node_type("test.Swallow", registry=REG, inputs={"mission": "Text"}, outputs={"action": "Action"}, uses_model=True)
    class Swallow(Node):
        def step(self, inputs, ctx):
            try:
                ctx.model.complete([])
            except Exception:
                pass
            return {"action": 1}

    g = model_graph(model_calls=1)
    g["nodes"]["policy"]["type"] = "test.Swallow"
    client = FakeClient()
    result = run(g, model_client=client)
    assert result["termination"] == "model_calls" and client.calls == 1


def test_episode_log_records_and_jsonl(tmp_path):
    log = EpisodeLog()
    result = run(corridor_graph(), {"seed": 3}, log=log)
    sims = [r for r in log.records if r["node"] == "sim"]
    policies = [r for r in log.records if r["node"] == "policy"]
    assert len(sims) == 5 and len(policies) == 4  # reset + 4 steps
    assert policies[0] == {**policies[0], "type": "test.Forward", "tick": 0, "inputs": {"position": 0},
                           "outputs": {"action": 1}, "error": None}
    assert all(r["duration_s"] >= 0 for r in log.records)
    path = log.write_jsonl(tmp_path / "ep" / "log.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["kind"] == "episode" and lines[0]["episode"] == {"seed": 3}
    assert lines[0]["result"]["success"] == result["success"]
    assert [x["kind"] for x in lines[1:]] == ["firing"] * len(log.records)


def test_disabled_log_records_nothing():
    log = EpisodeLog(enabled=False)
    run(corridor_graph(), log=log)
    assert log.records == []


def test_composite_graph_runs_like_the_flat_one():
    from harness.canvas import apply_patch

    flat = corridor_graph()
    wrapped = apply_patch(flat, {"ops": [{"op": "wrap", "id": "brain", "composite": "policy_box",
                                          "nodes": ["policy"]}]})
    assert "composites" in wrapped
    assert run(wrapped)["steps"] == run(flat)["steps"] == 4


def test_invalid_graph_is_refused_with_problems():
    g = corridor_graph()
    g["edges"].append({"from": "sim.goal", "to": "policy.position"})
    g["nodes"]["policy"]["type"] = "test.Cheater"
    g["edges"] = [{"from": "sim.goal", "to": "policy.goal"}, {"from": "sim.position", "to": "policy.position"},
                  {"from": "policy.action", "to": "sim.action"}]
    with pytest.raises(GraphError) as info:
        GraphRunner(g, registry=REG)
    assert [p["code"] for p in info.value.details] == ["privileged_leak"]
    # the runtime itself can still run it when asked not to validate (e.g. to measure a leak)
    assert run(g, validate=False)["success"] is True


def test_rng_restarts_when_the_same_episode_dict_is_run_twice():
    g = corridor_graph()
    g["nodes"]["policy"] = {"type": "test.Random", "config": {}}
    episode = {"seed": 11}
    with GraphRunner(g, registry=REG) as runner:
        runner.run_episode(episode)
        first = list(runner.nodes["policy"].draws)
        runner.nodes["policy"].draws.clear()
        runner.run_episode(episode)
        assert runner.nodes["policy"].draws == first


def test_constructor_failure_fails_episodes_instead_of_raising():
    @node_type("test.BadInit", registry=REG, inputs={"position": "Int"}, outputs={"action": "Action"})
    class BadInit(Node):
        def __init__(self, node_id, config=None):
            raise MemoryError("too big")

    g = corridor_graph()
    g["nodes"]["policy"] = {"type": "test.BadInit", "config": {}}
    with GraphRunner(g, registry=REG) as runner:
        result = runner.run_episode({"seed": 0})
    assert result["termination"] == "node_error" and "too big" in result["error"] and "constructor" in result["error"]


def test_runners_in_threads_are_independent():
    from concurrent.futures import ThreadPoolExecutor

    def one(seed):
        g = corridor_graph()
        g["nodes"]["policy"] = {"type": "test.Random", "config": {}}
        with GraphRunner(g, registry=REG) as runner:
            runner.run_episode({"seed": seed, "length": 3 + seed % 3})
            return seed, runner.nodes["policy"].draws

    with ThreadPoolExecutor(4) as pool:
        results = dict(pool.map(one, range(12)))
    assert results[0] == one(0)[1] and len(results[5]) == 3 + 5 % 3

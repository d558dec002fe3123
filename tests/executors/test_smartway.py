"""The smartway executor: each stage of the chain on real fixture data, the explicit-stop
metrics, the seeds end to end (model-free, and the model seed through the real openai
client on a loopback server), the oracle, tiers and `architect init`."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from babyai_testkit import FakeCtx, make_node
from navigation_testkit import (FIXTURE, SCRIPTED_MODEL, SEEDS, full_r2r, needs_full_r2r, scripted_navigator)

import executors.smartway.node_types  # noqa: F401  (registers the smartway node types)
from executors import load_executor
from executors.mp3d.data_r2r import Dataset
from executors.mp3d.metrics import score_trajectory
from harness.evaluation import evaluate
from harness.models.loopback import LoopbackServer


@pytest.fixture
def sim(fixture_data):
    node = make_node("smartway.Simulator", {"backend": "graph", "privileged_outputs": True})
    yield node
    node.close()


def test_explicit_stop_is_required_for_success():
    ds = Dataset(FIXTURE / "r2r")
    item = ds.episode("train", "1304_0")
    graph = ds.graph(item["scan"])
    at_goal = [[vp, 0.0, 0.0] for vp in item["path"]]
    assert score_trajectory(graph, at_goal, item["path"])["success"] == 1.0
    assert score_trajectory(graph, at_goal, item["path"], stopped=True)["success"] == 1.0
    cut = score_trajectory(graph, at_goal, item["path"], stopped=False)
    assert cut["success"] == 0.0 and cut["spl"] == 0.0 and cut["oracle_success"] == 1.0


def test_simulator_moves_to_waypoints_and_scores_with_explicit_stop(sim):
    out = sim.reset_episode({"split": "train", "instr_id": "1304_0"}, FakeCtx())
    path = out["reference_path"]
    for tick, viewpoint in enumerate(path[1:], start=1):
        ctx = FakeCtx()
        ctx.tick = tick
        out = sim.step({"actions": [viewpoint]}, ctx)
        assert out["state"]["viewpoint"] == viewpoint and out["state"]["moves"] == tick
    before_stop = sim.result()
    assert before_stop["success"] is False and before_stop["nav_error"] == 0.0      # not stopped yet
    ctx = FakeCtx()
    ctx.tick = len(path)
    sim.step({"actions": ["stop"]}, ctx)
    result = sim.result()
    assert sim.done() and result["success"] is True and result["spl"] == pytest.approx(1.0)
    assert result["moves"] == len(path) - 1 and result["stopped"]


def test_observe_lists_every_neighbour_with_direction_and_description(sim):
    out = sim.reset_episode({"split": "val_unseen", "instr_id": "1654_0"}, FakeCtx())
    waypoints = make_node("smartway.Observe").step({"panorama": out["panorama"], "state": out["state"]},
                                                   FakeCtx())["waypoints"]
    graph = Dataset(FIXTURE / "r2r").graph(out["state"]["scan"])
    here = graph.ix(out["state"]["viewpoint"])
    assert {w["viewpoint"] for w in waypoints} == {graph.ids[i] for i in graph.neighbours[here]}
    assert [w["rel_heading_deg"] for w in waypoints] == sorted(w["rel_heading_deg"] for w in waypoints)
    assert all(w["direction"] in ("ahead", "front left", "front right", "left", "right", "behind", "up", "down")
               for w in waypoints)
    assert all(w["distance"] > 0 for w in waypoints)


def test_keyword_decomposition_finds_actions_and_landmarks():
    node = make_node("smartway.KeywordDecompose")
    node.reset(FakeCtx())
    plan = node.step(
        {"instruction": "Walk past the sofa, turn left into the kitchen and stop by the fridge."}, FakeCtx())["plan"]
    subs = plan["sub_instructions"]
    assert [s["action"] for s in subs] == ["go straight", "turn left", "stop"]
    assert subs[0]["landmarks"] == ["sofa"] and "kitchen" in subs[1]["landmarks"] and "fridge" in plan["landmarks"]


def history_of(steps):
    node = make_node("smartway.History", {"max_steps_shown": 1})
    node.reset(FakeCtx())
    out = None
    for state, waypoints, decision in steps:
        inputs = {"state": state, "waypoints": waypoints}
        if decision is not None:
            inputs["decision"] = decision
        out = node.step(inputs, FakeCtx())["history"]
    return out


def wp(vp, x, direction="ahead", caption="a hallway", objects=()):
    return {"viewpoint": vp, "direction": direction, "rel_heading_deg": 0.0, "distance": 2.0, "caption": caption,
            "objects": list(objects), "position": [x, 0.0, 0.0]}


def st(vp, x, moves):
    return {"viewpoint": vp, "position": [x, 0.0, 0.0], "heading": 0.0, "moves": moves}


def test_history_numbers_places_records_steps_and_shows_what_it_is_told():
    history = history_of([
        (st("a", 0, 0), [wp("b", 2), wp("c", -2)], None),
        (st("b", 2, 1), [wp("a", 0), wp("d", 4, caption="a kitchen")], {"kind": "move", "viewpoint": "b", "thought": "go"}),
        (st("d", 4, 2), [wp("b", 2)], {"kind": "move", "viewpoint": "d", "thought": "kitchen"}),
    ])
    assert history["places"] == ["a", "b", "c", "d"] and history["trajectory"] == ["a", "b", "d"]
    assert history["edges"] == {"a": ["b", "c"], "b": ["a", "d"], "d": ["b"]}
    assert [s["to"] for s in history["steps"]] == [1, 3]
    text = history["text"]
    assert "Trajectory: Place 0 -> Place 1 -> Place 3" in text and "Step 1: at Place 1, moved to Place 3; thought: kitchen" in text
    assert "Step 0" not in text                                         # max_steps_shown 1
    assert "Place 3: a kitchen" in text and "Place 0: a hallway" in text   # seen from Place 1
    start = history_of([(st("a", 0, 0), [wp("b", 2)], None)])["text"]
    assert "just begun" in start and "Place 0: no description yet" in start


def test_heuristic_progress_moves_on_at_landmarks_and_by_pace():
    plan = {"sub_instructions": [{"index": 0, "text": "walk to the sofa", "action": "go straight", "landmarks": ["sofa"]},
                                 {"index": 1, "text": "stop at the piano", "action": "stop", "landmarks": ["piano"]}]}
    node = make_node("smartway.HeuristicProgress", {"moves_per_sub": 1.5})
    node.reset(FakeCtx())
    history = {"current": "x", "descriptions": {"x": "a living room with a sofa"}}
    first = node.step({"plan": plan, "history": history, "state": {"moves": 0}}, FakeCtx())["progress"]
    assert first["current"] == 1 and not first["done"]                  # the sofa is here: on to the piano
    there = node.step({"plan": plan, "history": {"current": "y", "descriptions": {"y": "a piano by a window"}},
                       "state": {"moves": 1}}, FakeCtx())["progress"]
    assert there["done"] and "last part" in there["thought"]
    late = make_node("smartway.HeuristicProgress")
    late.reset(FakeCtx())
    assert late.step({"plan": plan, "history": {"current": "z", "descriptions": {}}, "state": {"moves": 2}},
                     FakeCtx())["progress"]["done"]                      # E = max(2, round(0.8 x 2)) = 2 moves


PLAN = {"sub_instructions": [{"index": 0, "text": "turn left to the kitchen", "action": "turn left",
                              "landmarks": ["kitchen"]}]}


def test_heuristic_chooser_scores_landmarks_directions_and_backtracks_when_stuck():
    node = make_node("smartway.HeuristicChooser")
    history = {"trajectory": ["a"], "edges": {"a": ["b", "c"]}}
    waypoints = [wp("b", 1, "right", "a bedroom"), wp("c", 2, "left", "a kitchen with a stove")]
    choice = node.step({"plan": PLAN, "progress": {"current": 0, "done": False}, "history": history,
                        "waypoints": waypoints}, FakeCtx())["choice"]
    assert choice["kind"] == "move" and choice["viewpoint"] == "c" and choice["ranked"] == ["c", "b"]
    stuck = {"trajectory": ["a", "b", "c"], "edges": {"a": ["b", "c", "e"], "b": ["a", "c"], "c": ["a", "b"]}}
    back = node.step({"plan": PLAN, "progress": {"current": 0, "done": False}, "history": stuck,
                      "waypoints": [wp("a", 0), wp("b", 1)]}, FakeCtx())["choice"]
    assert back["kind"] == "backtrack" and back["target"] == "a"
    done = node.step({"plan": PLAN, "progress": {"current": 0, "done": True}, "history": history,
                      "waypoints": waypoints}, FakeCtx())["choice"]
    assert done["kind"] == "stop"


def test_rule_fusion_lets_the_configured_side_settle_a_stopping_disagreement():
    history = {"trajectory": ["a"]}
    moving = {"kind": "move", "viewpoint": "c", "ranked": ["c"], "thought": "go on"}
    stopping = {"kind": "stop", "ranked": ["b", "c"], "thought": "here"}
    done, not_done = {"done": True, "thought": "arrived"}, {"done": False, "thought": "not yet"}
    fuse = make_node("smartway.RuleFusion")
    assert fuse.step({"progress": done, "choice": moving, "history": history}, FakeCtx())["decision"]["kind"] == "stop"
    cont = fuse.step({"progress": not_done, "choice": stopping, "history": history}, FakeCtx())["decision"]
    assert cont["kind"] == "move" and cont["viewpoint"] == "b" and "not done" in cont["fused"]
    agreed = fuse.step({"progress": not_done, "choice": moving, "history": history}, FakeCtx())["decision"]
    assert agreed["viewpoint"] == "c" and agreed["fused"] == "agreed" and "not yet" in agreed["thought"]
    trusting = make_node("smartway.RuleFusion", {"trust": "choice"})
    assert trusting.step({"progress": done, "choice": moving, "history": history}, FakeCtx())["decision"]["kind"] == "move"


def test_decision_test_gates_stops_revisits_backtracks_and_invalid_moves():
    history = {"trajectory": ["a", "b"], "current": "b", "backtracks": 0}
    waypoints = [wp("a", 0), wp("c", 2)]
    state = {"moves": 1}
    gate = make_node("smartway.DecisionTest", {"min_stop_moves": 3, "block_revisits": True, "max_backtracks": 0})
    cases = [({"kind": "stop", "ranked": []}, "early stop"),
             ({"kind": "move", "viewpoint": "a", "ranked": ["a", "c"]}, "revisit"),
             ({"kind": "backtrack", "target": "a", "ranked": []}, "backtrack"),
             ({"kind": "move", "viewpoint": "zz", "ranked": []}, "not a waypoint")]
    for decision, reason in cases:
        out = gate.step({"decision": decision, "waypoints": waypoints, "history": history, "state": state},
                        FakeCtx())["decision"]
        assert out["kind"] == "move" and out["viewpoint"] == "c" and out["tested"] == reason
    loose = make_node("smartway.DecisionTest")
    for decision, _ in cases[:3]:
        assert loose.step({"decision": decision, "waypoints": waypoints, "history": history, "state": state},
                          FakeCtx())["decision"] == decision


def test_backtrack_follows_the_agents_own_graph():
    history = {"current": "d", "edges": {"a": ["b", "c"], "b": ["a", "d"], "d": ["b"]},
               "positions": {"a": [0, 0, 0], "b": [2, 0, 0], "c": [-2, 0, 0], "d": [4, 0, 0]}}
    act = make_node("smartway.Backtrack")
    assert act.step({"decision": {"kind": "backtrack", "target": "a"}, "history": history}, FakeCtx()) == \
        {"actions": ["b", "a"]}
    assert make_node("smartway.Backtrack", {"max_hops": 1}).step(
        {"decision": {"kind": "backtrack", "target": "a"}, "history": history}, FakeCtx()) == {"actions": ["b"]}
    assert act.step({"decision": {"kind": "backtrack", "target": "c"}, "history": dict(history, edges={"d": []})},
                    FakeCtx()) == {"actions": ["stop"]}
    assert act.step({"decision": {"kind": "move", "viewpoint": "b"}, "history": history}, FakeCtx()) == \
        {"actions": ["b"]}


def test_heuristic_seed_passes_smoke(fixture_data, tmp_path):
    metrics = evaluate(SEEDS / "smartway-heuristic", "smoke", workers=1, use_cache=False, progress=False,
                       out_dir=tmp_path)
    assert metrics["complete"] and metrics["n"] == 5 and metrics["agent_errors"] == 0
    for ep in metrics["episodes"]:
        m = ep["metrics"]
        assert ep["steps"] <= 15 and ep["model_calls"] == 0 and m["backend"] == "graph"
        assert ep["success"] == (m["stopped"] and m["nav_error"] < 3.0)
    assert set(metrics["secondary"]) >= {"spl", "ndtw", "sdtw", "oracle_success", "nav_error", "stopped"}


def test_oracle_is_perfect_on_the_smoke_tier(fixture_data):
    ex = load_executor("smartway")
    results = [ex.oracle(e) for e in ex.episodes("smoke")]
    assert all(r["success"] for r in results) and all(r["metrics"]["spl"] == pytest.approx(1.0) for r in results)


def test_model_seed_runs_through_the_openai_client_on_a_loopback_server(fixture_data, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "loopback")
    with LoopbackServer(scripted_navigator, reply_model=SCRIPTED_MODEL) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
        metrics = evaluate(SEEDS / "smartway", "smoke", workers=1, use_cache=False, progress=False, out_dir=tmp_path)
        requests = list(server.requests)
    assert metrics["complete"] and metrics["agent_errors"] == 0 and metrics["model"]["calls"] == len(requests)
    tasks = [r["messages"][-1]["content"].splitlines()[0] for r in requests]
    assert tasks.count("Task: decompose") == 5 and {"Task: progress", "Task: choose"} <= set(tasks)
    assert all(ep["metrics"]["stopped"] for ep in metrics["episodes"])
    log = [json.loads(line) for line in (tmp_path / metrics["episodes"][0]["log"]).read_text().splitlines()]
    assert not [r for r in log if "fallback" in (r.get("self") or {})]     # every reply was understood


@needs_full_r2r
def test_tiers_are_the_seeded_draw_and_the_oracle_is_perfect_on_search():
    from executors.smartway.draw_tiers import draw

    ex = load_executor("smartway")
    drawn = draw(Dataset(full_r2r()))
    for tier in ("smoke", "search", "holdout"):
        assert [{k: e[k] for k in ("split", "instr_id")} for e in ex.episodes(tier)] == drawn[tier]
    paths = {tier: {e["instr_id"].split("_")[0] for e in ex.episodes(tier)} for tier in ("search", "holdout")}
    assert not paths["search"] & paths["holdout"] and ex.sealed == {"holdout"}
    results = [ex.oracle(e) for e in ex.episodes("search")]
    assert all(r["success"] for r in results) and sum(r["metrics"]["spl"] for r in results) / 100 == pytest.approx(1.0)


@needs_full_r2r
def test_init_random_commits_iteration_zero(tmp_path):
    env = dict(os.environ, ARCHITECT_RUNS_DIR=str(tmp_path / "runs"))
    done = subprocess.run(["architect", "init", "random", "smartway-heuristic", "--run-id", "s", "--smoke-episodes",
                           "2", "--eval-episodes", "3", "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    log = subprocess.run(["git", "-C", str(tmp_path / "runs" / "s"), "log", "--oneline"], capture_output=True,
                         text=True).stdout
    assert "iteration 0" in log


def test_every_smartway_type_documents_its_full_behaviour():
    from harness.canvas.registry import default_registry

    types = {nt.name: nt.to_dict() for nt in default_registry().all() if nt.name.startswith("smartway.")}
    assert len(types) == 13
    assert not [n for n, t in types.items() if len(t["behaviour"]) <= len(t["doc"])]
    chooser = " ".join(types["smartway.LLMChooser"]["behaviour"].split())
    assert "moves to the first unvisited waypoint" in chooser

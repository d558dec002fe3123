"""The mapgpt node chain on real fixture data: candidates, map, prompt, parser,
turn-then-move, image-mode messages."""

from __future__ import annotations

import base64
import math

import numpy as np
import pytest
from babyai_testkit import FakeCtx, make_node
from mapgpt_testkit import FIXTURE

import executors.mapgpt.node_types  # noqa: F401  (registers the mapgpt node types)
from executors.mp3d.data_r2r import Dataset
from executors.mapgpt.nodes.action import turn_then_move
from executors.mapgpt.nodes.parser import NO_PLANS, parse_reply
from executors.mapgpt.nodes.vision import image_messages
from executors.mp3d.panorama import sweep
from executors.mp3d.sim import new_simulator

DS = Dataset(FIXTURE / "r2r")


@pytest.fixture(scope="module")
def start():
    item = next(iter(DS.split("val_unseen").values()))
    sweeper = new_simulator(DS.connectivity, backend="graph")
    views = sweep(sweeper, item["scan"], item["path"][0], DS.captions(item["scan"]))
    return item, {"viewpoint": item["path"][0], "views": views}


def test_candidates_keep_the_view_nearest_the_centre(start):
    item, panorama = start
    cands = make_node("mapgpt.CandidateBuilder").step({"panorama": panorama}, FakeCtx())["candidates"]
    graph = DS.graph(item["scan"])
    assert {c["viewpoint"] for c in cands} == {graph.ids[i] for i in graph.neighbours[graph.ix(item["path"][0])]}
    for cand in cands:
        angles = [math.hypot(loc["rel_heading"], loc["rel_elevation"]) for view in panorama["views"]
                  for loc in view["navigable"] if loc["viewpoint"] == cand["viewpoint"]]
        assert cand["angle"] == min(angles)
        assert cand["caption"] == panorama["views"][cand["view_index"]]["caption"]


def test_turning_to_a_candidate_view_then_moving_reaches_it(start):
    item, panorama = start
    cands = make_node("mapgpt.CandidateBuilder").step({"panorama": panorama}, FakeCtx())["candidates"]
    sim = new_simulator(DS.connectivity, backend="graph")
    for cand in cands:
        sim.newEpisode([item["scan"]], [item["path"][0]], [item["heading"]], [0.0])
        for index, heading, elevation in turn_then_move(sim.getState()[0].viewIndex, cand):
            sim.makeAction([index], [heading], [elevation])
        assert sim.getState()[0].location.viewpointId == cand["viewpoint"]


def _prompt(start, decisions, config=None):
    item, panorama = start
    cands = make_node("mapgpt.CandidateBuilder").step({"panorama": panorama}, FakeCtx())["candidates"]
    state = {"viewpoint": item["path"][0], "heading": 0.0, "view_index": 12, "decisions": decisions}
    memory = make_node("mapgpt.MapMemory")
    memory.reset(FakeCtx())
    nav_map = memory.step({"state": state, "candidates": cands}, FakeCtx())["map"]
    node = make_node("mapgpt.PromptBuilder", config or {})
    return node.step({"instruction": item["instruction"], "map": nav_map, "candidates": cands, "state": state},
                     FakeCtx()), cands


def test_prompt_offers_stop_only_from_step_three_and_lists_every_section(start):
    before, cands = _prompt(start, 2)
    after, _ = _prompt(start, 3)
    assert [o["kind"] for o in before["options"]] == ["move"] * len(cands)
    assert after["options"][0] == {"kind": "stop", "text": "stop", "letter": "A"}
    for section in ("Instruction:", "History:", "Trajectory: Place 0", "Map:", "Supplementary Info:",
                    "Previous Planning:", "Action options (step 3):", "A. stop"):
        assert section in after["prompt"]
    bare, _ = _prompt(start, 3, {"show_map": False, "show_observations": False})
    assert "Map:" not in bare["prompt"] and "objects:" not in bare["prompt"]


def test_parser_falls_back_to_the_first_option(start):
    early, _ = _prompt(start, 0)
    late, _ = _prompt(start, 5)
    reply = "Thought: go.\nNew Planning: walk to the kitchen\nAction: B"
    option, valid, plan = parse_reply(reply, early["options"])
    assert valid and option["letter"] == "B" and plan == "walk to the kitchen"
    for garbage in ("I am lost", "Action: Z"):
        option, valid, plan = parse_reply(garbage, early["options"])
        assert not valid and option["kind"] == "move" and option["letter"] == "A" and plan == NO_PLANS
        option, valid, _ = parse_reply(garbage, late["options"])
        assert not valid and option["kind"] == "stop"
    option, _, _ = parse_reply("Action: B ... on second thought, Action: A", late["options"])
    assert option["kind"] == "stop"


def test_planning_memory_keeps_the_latest_plan_and_the_history():
    node = make_node("mapgpt.PlanningMemory")
    ctx = FakeCtx()
    node.reset(ctx)
    first = node.step({}, ctx)
    assert "just started" in first["planning"] and "just begun" in first["history"]
    out = node.step({"planning": "go up the stairs", "choice": {"option": {"text": "turn left to Place 2"}}}, ctx)
    out = node.step({"choice": {"option": {"text": "go up to Place 5"}}}, ctx)
    assert out["planning"] == "go up the stairs"
    assert out["history"] == "step 0: turn left to Place 2, step 1: go up to Place 5"


def test_image_mode_message_carries_one_image_per_place():
    nav_map = {"places": ["a", "b", "c"], "images": {"a": np.zeros((4, 6, 3), np.uint8),
                                                    "c": np.full((4, 6, 3), 255, np.uint8)}}
    [message] = image_messages("Instruction: go", nav_map)
    texts = [p["text"] for p in message["content"] if p["type"] == "text"]
    images = [p for p in message["content"] if p["type"] == "image"]
    assert texts[0].startswith("Instruction: go") and texts[1:] == ["Image 0:", "Image 2:"]
    assert [base64.b64decode(p["data"])[:4] for p in images] == [b"\x89PNG"] * 2
    [short] = image_messages("x", nav_map, max_images=1)
    assert [p["text"] for p in short["content"] if p["type"] == "text"][1:] == ["Image 2:"]


def test_majority_vote_and_action_gate(start):
    late, _ = _prompt(start, 5)
    options = late["options"]
    vote = make_node("mapgpt.MajorityVote")
    out = vote.step({"reply": "Action: B", "reply_b": "Action: C\nNew Planning: x\nAction: C", "reply_c": "Action: C",
                     "options": options}, FakeCtx())
    assert out["choice"]["option"]["letter"] == "C" and out["choice"]["votes"] == {"B": 1, "C": 2}
    tie = vote.step({"reply": "Action: B", "reply_b": "Action: C", "options": options}, FakeCtx())
    assert tie["choice"]["option"]["letter"] == "B"
    item, _ = start
    nav_map = {"trajectory": [item["path"][0], options[1]["viewpoint"]]}
    gate = make_node("mapgpt.ActionGate", {"min_stop_step": 6, "block_revisits": True})
    state = {"decisions": 5}
    stop = {"option": options[0], "valid": True}
    gated = gate.step({"choice": stop, "options": options, "map": nav_map, "state": state}, FakeCtx())["choice"]
    assert gated["gated"] == "early stop" and gated["option"] == options[2]
    back = {"option": options[1], "valid": True}
    gated = gate.step({"choice": back, "options": options, "map": nav_map, "state": state}, FakeCtx())["choice"]
    assert gated["gated"] == "revisit" and gated["option"] == options[2]
    ok = {"option": options[2], "valid": True}
    assert gate.step({"choice": ok, "options": options, "map": nav_map, "state": state}, FakeCtx())["choice"] == ok

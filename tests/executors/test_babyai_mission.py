"""Mission grammar on real missions, checked against minigrid's own instruction objects."""

from __future__ import annotations

import pytest
from minigrid.envs.babyai.core import verifier as V

from babyai_testkit import FakeCtx, make_node
from executors.babyai import envs
from executors.babyai import world as W
from executors.babyai.mission import MissionParseError, mission_groups, parse_subgoal, split_mission

LEVELS = ["BabyAI-GoToSeq-v0", "BabyAI-SynthSeq-v0", "BabyAI-BossLevel-v0", "BabyAI-MiniBossLevel-v0",
          "BabyAI-PutNextLocal-v0", "BabyAI-Open-v0", "BabyAI-PickupLoc-v0", "BabyAI-GoToLocal-v0"]
VERBS = {V.GoToInstr: "goto", V.PickupInstr: "pickup", V.OpenInstr: "open", V.PutNextInstr: "put"}


def _desc_fields(desc) -> dict:
    return {"type": desc.type, "color": desc.color, "loc": desc.loc}


@pytest.mark.parametrize("level", LEVELS)
def test_split_matches_the_verifier_leaves(level):
    env = envs.make_env(level)
    kinds = set()
    for seed in range(40):
        envs.reset_env(env, seed)
        u = env.unwrapped
        leaves = envs.leaves_in_order(u.instrs)
        subgoals = split_mission(u.mission)
        assert subgoals == [leaf.surface(u) for leaf in leaves], u.mission
        for text, leaf in zip(subgoals, leaves):
            parsed = parse_subgoal(text)
            assert parsed["verb"] == VERBS[type(leaf)]
            if parsed["verb"] == "put":
                assert parsed["obj"] == _desc_fields(leaf.desc_move)
                assert parsed["target"] == _desc_fields(leaf.desc_fixed)
            else:
                assert parsed["obj"] == _desc_fields(leaf.desc)
        kinds.add(type(u.instrs).__name__)
    if level in ("BabyAI-GoToSeq-v0", "BabyAI-SynthSeq-v0", "BabyAI-BossLevel-v0"):
        assert {"BeforeInstr", "AfterInstr", "AndInstr"} <= kinds  # every connective was exercised


def test_after_you_reverses_and_then_keeps_order():
    assert split_mission("go to the red ball after you open a door") == ["open a door", "go to the red ball"]
    assert split_mission("pick up a key, then go to the grey box and open the door") == [
        "pick up a key", "go to the grey box", "open the door"]
    assert split_mission("go to a ball then go to a box") == ["go to a ball", "go to a box"]


def test_descriptions():
    assert parse_subgoal("put the red ball next to a door on your left") == {
        "verb": "put", "obj": {"type": "ball", "color": "red", "loc": None},
        "target": {"type": "door", "color": None, "loc": "left"}}
    assert parse_subgoal("go to an object in front of you")["obj"] == {"type": None, "color": None, "loc": "front"}


@pytest.mark.parametrize("bad", ["fly to the moon", "go to the red unicorn", "put the ball", "go to"])
def test_text_outside_the_grammar_is_rejected(bad):
    with pytest.raises(MissionParseError):
        split_mission(bad)


def test_parser_and_planner_nodes():
    ctx = FakeCtx()
    parser, planner = make_node("babyai.MissionParser"), make_node("babyai.SequentialSubgoals")
    parser.reset(ctx)
    planner.reset(ctx)
    subgoals = parser.step({"mission": "go to a box after you pick up the key"}, ctx)["subgoals"]
    assert subgoals == ["pick up the key", "go to a box"]
    fb = {"actions": ["forward"], "blocked": [False]}
    assert planner.step({"subgoals": subgoals, "feedback": fb}, ctx)["subgoal"] == "pick up the key"
    fb = {"actions": ["pickup", "done"], "blocked": [False, False]}
    assert planner.step({"subgoals": subgoals, "feedback": fb}, ctx) == {"subgoal": "go to a box", "index": 1}
    assert "subgoal" not in planner.step({"subgoals": subgoals, "feedback": fb}, ctx)
    naive = make_node("babyai.ThenOnlyParser")
    assert naive.step({"mission": "go to a box after you pick up the key"}, ctx)["subgoals"] == [
        "go to a box", "pick up the key"]


def test_mission_groups_are_stages_of_any_order_parts():
    mission = "go to a key and go to the blue ball, then go to the blue key"
    assert mission_groups(mission) == [["go to a key", "go to the blue ball"], ["go to the blue key"]]
    assert mission_groups("open a door after you pick up a key and go to a box") == [
        ["pick up a key", "go to a box"], ["open a door"]]


def test_known_target_first_picks_a_visible_part_of_the_current_stage():
    ctx = FakeCtx()
    planner = make_node("babyai.KnownTargetFirst")
    planner.reset(ctx)
    mission = "go to a key and go to the blue ball, then go to the blue key"
    subgoals = split_mission(mission)
    grid = W.new_map()
    quiet = {"actions": ["forward"], "blocked": [False]}
    done = {"actions": ["right", "done"], "blocked": [False, False]}
    inputs = {"subgoals": subgoals, "mission": mission, "map": grid, "feedback": quiet}
    assert planner.step(inputs, ctx)["subgoal"] == "go to a key"  # nothing known: written order
    grid[W.MAP_RADIUS, W.MAP_RADIUS - 3] = (W.BALL, W.COLOR_TO_IDX["blue"], 0)
    assert planner.step(inputs, ctx) == {"subgoal": "go to the blue ball", "index": 1}
    grid[W.MAP_RADIUS + 1, W.MAP_RADIUS - 3] = (W.KEY, W.COLOR_TO_IDX["blue"], 0)  # both known: stay
    assert planner.step(inputs, ctx)["subgoal"] == "go to the blue ball"
    assert planner.step({**inputs, "feedback": done}, ctx)["subgoal"] == "go to a key"
    assert planner.step({**inputs, "feedback": done}, ctx)["subgoal"] == "go to the blue key"  # next stage
    assert planner.step({**inputs, "feedback": done}, ctx) == {"index": 3}

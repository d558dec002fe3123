"""Executor policy, exploration, replanning and stop gates on small hand-made maps."""

from __future__ import annotations

import numpy as np

from babyai_testkit import FakeCtx, make_node
from executors.babyai import world as W
from executors.babyai.policy import SubgoalPolicy, decode_actions, make_request

R = W.MAP_RADIUS


def room(width=5, height=5):
    """A walled room of width x height free cells; the start cell is its bottom centre."""
    grid = W.new_map()
    x0, y0 = R - width // 2, R - height + 1
    for x in range(x0 - 1, x0 + width + 1):
        for y in range(y0 - 1, y0 + height + 1):
            inside = x0 <= x < x0 + width and y0 <= y < y0 + height
            grid[x, y] = (W.EMPTY, 0, 0) if inside else (W.WALL, 5, 0)
    return grid


def code(kind, color="red", state=0):
    return (W.OBJECT_TO_IDX[kind], W.COLOR_TO_IDX[color], state)


def solve(prompt, grid, pose=None, carrying=None):
    pose = pose or W.start_pose()
    response = SubgoalPolicy().infer(make_request(prompt, np.zeros((7, 7, 3), np.uint8), grid, pose, carrying))
    return decode_actions(response), response["status"]


def test_goto_plans_the_shortest_path_and_ends_facing_the_target():
    grid = room()
    grid[R + 1, R - 2] = code("ball", "blue")
    actions, status = solve("go to the blue ball", grid)
    assert status == "complete"
    assert actions == ["forward", "forward", "right"]
    assert solve("go to the red ball", grid) == ([], "explore")


def test_pickup_frees_the_hands_first_and_locked_doors_need_their_key():
    grid = room()
    grid[R - 1, R - 2] = code("key", "yellow")
    actions, status = solve("pick up the yellow key", grid, carrying={"type": "ball", "color": "red"})
    assert status == "partial" and actions == ["drop"]
    actions, status = solve("pick up the yellow key", grid)
    assert status == "complete" and actions[-1] == "pickup"

    grid[R, R - 5] = code("door", "yellow", W.LOCKED)  # in the top wall
    actions, status = solve("open the yellow door", grid)
    assert status == "partial" and actions[-1] == "pickup"  # fetch the key first
    actions, status = solve("open the yellow door", grid, carrying={"type": "key", "color": "yellow"})
    assert status == "complete" and actions[-1] == "toggle"


def test_put_next_to_drops_beside_the_target():
    grid = room()
    grid[R + 2, R - 4] = code("box", "green")
    actions, status = solve("put the red ball next to the green box", grid, carrying={"type": "ball", "color": "red"})
    assert status == "complete" and actions[-1] == "drop"
    x, y, d = R, R, 0
    for a in actions[:-1]:
        if a == "forward":
            x, y = W.front_of(x, y, d)
        elif a in ("left", "right"):
            d = (d + (1 if a == "right" else -1)) % 4
    fx, fy = W.front_of(x, y, d)
    assert abs(fx - (R + 2)) + abs(fy - (R - 4)) == 1


def test_frontier_exploration_walks_to_face_unseen_cells():
    grid = room()
    grid[R - 2, R - 5] = code("door", "grey", W.CLOSED)
    explore = make_node("babyai.FrontierExplore")
    chunk = explore.step({"request": True, "map": grid, "pose": W.start_pose(), "carrying": {}}, FakeCtx())["chunk"]
    assert chunk[-2:] == ["toggle", "forward"]  # into the only door, facing the unseen cell beyond
    grid[R - 2, R - 5] = code("door", "grey", W.LOCKED)
    chunk = explore.step({"request": True, "map": grid, "pose": W.start_pose(), "carrying": {}}, FakeCtx())["chunk"]
    assert chunk == ["left"]  # nothing reachable and no key known: look around
    grid[R + 1, R] = code("key", "grey")
    chunk = explore.step({"request": True, "map": grid, "pose": W.start_pose(), "carrying": {}}, FakeCtx())["chunk"]
    assert chunk == ["right", "pickup"]


def test_other_explorers_emit_bounded_chunks():
    grid = room()
    for name, config in (("babyai.RandomWalkExplore", {"length": 5}), ("babyai.WallFollowExplore", {"length": 6})):
        node = make_node(name, config)
        chunk = node.step({"request": True, "map": grid, "pose": W.start_pose(), "carrying": {}}, FakeCtx(3))["chunk"]
        assert 1 <= len(chunk) <= config["length"]
        assert set(chunk) <= {"left", "right", "forward", "toggle"}


def test_replanning_truncates_and_drops_completion():
    ctx = FakeCtx()
    horizon = make_node("babyai.ReplanHorizon", {"horizon": 2})
    whole = make_node("babyai.ExecuteWholeChunk")
    plan = {"plan": ["forward", "forward", "right"], "completes": True}
    assert horizon.step(plan, ctx) == {"chunk": ["forward", "forward"], "completes": False}
    assert whole.step(plan, ctx) == {"chunk": ["forward", "forward", "right"], "completes": True}
    assert whole.step({"exploration": ["left", "forward"]}, ctx) == {"chunk": ["left", "forward"], "completes": False}
    assert whole.step({}, ctx) == {"chunk": ["left"], "completes": False}


def test_stop_gates():
    ctx = FakeCtx()
    trust = make_node("babyai.TrustPlanStop")
    assert trust.step({"chunk": ["forward"], "completes": True}, ctx) == {"actions": ["forward", "done"]}
    assert trust.step({"chunk": ["forward"], "completes": False}, ctx) == {"actions": ["forward"]}

    verify = make_node("babyai.VerifyStop")
    verify.reset(ctx)
    image = np.zeros((7, 7, 3), np.uint8)
    image[:, :, 0] = W.EMPTY
    obs = {"image": image}
    step = {"chunk": ["forward", "right"], "completes": True, "subgoal": "go to the blue ball",
            "observation": obs, "carrying": {}}
    assert verify.step(step, ctx) == {"actions": ["forward", "right"]}  # no done in the moving chunk
    # next tick the view shows no ball ahead: no done; this chunk claims nothing
    assert verify.step({**step, "chunk": ["left"], "completes": False}, ctx) == {"actions": ["left"]}
    image[3, 5] = code("ball", "blue")
    assert verify.step(step, ctx) == {"actions": ["forward", "right"]}  # claimed again
    assert verify.step(step, ctx) == {"actions": ["done"]}  # confirmed by the view


def test_pickup_of_the_object_already_held_puts_it_down_first():
    grid = room()
    held = {"type": "key", "color": "yellow"}
    assert solve("pick up the yellow key", grid, carrying=held) == (["drop", "pickup"], "complete")
    grid[R, R - 1] = code("ball", "blue")  # something in front: find a free spot first
    actions, status = solve("pick up the yellow key", grid, carrying=held)
    assert status == "partial" and actions[-1] == "drop" and actions[0] in ("left", "right")

"""Perception, pose tracking and map memory against the true grid of real levels."""

from __future__ import annotations

import numpy as np
import pytest
from minigrid.core.constants import DIR_TO_VEC

from babyai_testkit import FakeCtx, make_node
from executors.babyai import world as W


def to_world(start: dict, mx: int, my: int) -> tuple[int, int]:
    """Map cell (start frame) -> true grid cell, using the true start pose (test only)."""
    fwd, right = DIR_TO_VEC[start["dir"]], DIR_TO_VEC[(start["dir"] + 1) % 4]
    dx, dy = mx - W.MAP_RADIUS, my - W.MAP_RADIUS
    return (int(start["x"] + (-dy) * fwd[0] + dx * right[0]), int(start["y"] + (-dy) * fwd[1] + dx * right[1]))


def walk(level: str, seed: int, memory: str, pose_type: str = "babyai.DeadReckoning", ticks: int = 60,
         memory_config: dict | None = None):
    """Drive the real simulator with seeded random chunks; yield per tick what the
    agent believes and the privileged truth."""
    ctx = FakeCtx(seed)
    sim = make_node("babyai.Simulator", {"privileged_outputs": True}, "sim")
    perceive = make_node("babyai.Perception")
    pose_node = make_node(pose_type)
    mem = make_node(memory, memory_config)
    out = sim.reset_episode({"level": level, "seed": seed}, ctx)
    for node in (perceive, pose_node, mem):
        node.reset(ctx)
    start = out["true_pose"]
    rng = np.random.default_rng(seed)
    for tick in range(ticks):
        ctx.tick = tick
        seen = perceive.step({"observation": out["observation"]}, ctx)
        pose = pose_node.step({"feedback": out["feedback"]}, ctx)["pose"]
        grid = mem.step({"cells": seen["cells"], "pose": pose}, ctx)["map"]
        yield start, out, seen, pose, grid
        if sim.done():
            return
        chunk = [str(a) for a in rng.choice(["forward", "forward", "left", "right", "toggle"], size=3)]
        out = sim.step({"actions": chunk}, ctx)


def true_pose_from_belief(start: dict, pose: dict) -> tuple[int, int, int]:
    x, y = to_world(start, pose["x"], pose["y"])
    return x, y, (start["dir"] + pose["dir"]) % 4


@pytest.mark.parametrize("level,seed", [("BabyAI-GoTo-v0", 3), ("BabyAI-GoToObjMaze-v0", 7),
                                        ("BabyAI-Open-v0", 11)])
def test_dead_reckoning_and_full_map_match_the_true_grid(level, seed):
    checked_cells = 0
    bumps = 0
    for start, out, seen, pose, grid in walk(level, seed, "babyai.FullMap"):
        truth = out["true_pose"]
        assert true_pose_from_belief(start, pose) == (truth["x"], truth["y"], truth["dir"])
        bumps += sum(out["feedback"]["blocked"])
        full = out["full_grid"]
        xs, ys = np.nonzero(grid[:, :, 0] != W.UNSEEN)
        for mx, my in zip(xs.tolist(), ys.tolist()):
            wx, wy = to_world(start, mx, my)
            expected = full[wx, wy]
            if (wx, wy) == (truth["x"], truth["y"]) and expected[0] != W.DOOR:
                assert grid[mx, my, 0] == W.EMPTY  # Grid.encode draws nothing under the agent
                continue
            if expected[0] == W.EMPTY:  # Grid.encode writes empty cells as (1, 0, 0)
                assert grid[mx, my, 0] == W.EMPTY
            else:
                assert tuple(grid[mx, my]) == tuple(expected), (mx, my, wx, wy)
            checked_cells += 1
    assert checked_cells > 500
    assert bumps > 0  # the walk did bump into things, so the bump handling was exercised


def test_perception_cells_are_egocentric():
    for start, out, seen, pose, grid in walk("BabyAI-GoToLocal-v0", 2, "babyai.FullMap", ticks=5):
        image = out["observation"]["image"]
        by_offset = {(c["fwd"], c["right"]): c["code"] for c in seen["cells"]}
        assert (0, 0) not in by_offset  # the agent's own cell is not a perceived cell
        assert by_offset[(1, 0)] == tuple(image[3, 5])  # straight ahead
        assert by_offset.get((6, -3)) in (None, tuple(image[0, 0]))  # far left corner
        truth = out["true_pose"]
        ahead = np.array([truth["x"], truth["y"]]) + DIR_TO_VEC[truth["dir"]]
        full = out["full_grid"][ahead[0], ahead[1]]
        assert by_offset[(1, 0)][0] == full[0]


def test_carrying_is_perceived_after_pickup(ctx):
    sim = make_node("babyai.Simulator", {}, "sim")
    perceive = make_node("babyai.Perception")
    from executors.babyai.oracle import oracle
    from minigrid.utils.baby_ai_bot import BabyAIBot

    episode = {"level": "BabyAI-PickupLoc-v0", "seed": 4}
    assert oracle(episode)["success"]
    out = sim.reset_episode(episode, ctx)
    assert perceive.step({"observation": out["observation"]}, ctx)["carrying"] == {}
    bot = BabyAIBot(sim.env.unwrapped)
    while not sim.env.unwrapped.carrying:
        out = sim.step({"actions": [int(bot.replan())]}, ctx)
    carried = sim.env.unwrapped.carrying
    assert perceive.step({"observation": out["observation"]}, ctx)["carrying"] == {
        "type": carried.type, "color": carried.color}


def test_open_loop_pose_drifts_after_a_bump():
    drifted = False
    for start, out, seen, pose, grid in walk("BabyAI-GoTo-v0", 3, "babyai.FullMap", "babyai.OpenLoopPose"):
        truth = out["true_pose"]
        if true_pose_from_belief(start, pose) != (truth["x"], truth["y"], truth["dir"]):
            drifted = True
            break
    assert drifted


def test_window_map_forgets_and_view_only_map_holds_one_view():
    full_known, window_known, view_known = [], [], []
    for memory, sink, config in (("babyai.FullMap", full_known, None), ("babyai.WindowMap", window_known, {"horizon": 2}),
                                 ("babyai.ViewOnlyMap", view_known, None)):
        for start, out, seen, pose, grid in walk("BabyAI-GoTo-v0", 5, memory, ticks=30, memory_config=config):
            sink.append(int((grid[:, :, 0] != W.UNSEEN).sum()))
    assert full_known == sorted(full_known)  # never forgets
    assert max(view_known) <= 49
    assert window_known[-1] < full_known[-1]
    assert all(v <= w <= f for v, w, f in zip(view_known, window_known, full_known))

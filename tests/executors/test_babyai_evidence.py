"""Episode traces on the real BabyAI executor: the divergence point of two
graphs differing in one node, the state renderer, the oracle's wall cap,
the stochastic mode, and the deferred log against an eager snapshot."""

from __future__ import annotations

import copy
import json

from log_snapshot_kit import deferred_and_eager

from executors import load_executor
from harness.canvas.episode_log import EpisodeLog
from harness.canvas.patch import apply_patch
from harness.canvas.runtime import GraphRunner
from harness.evaluation.trace import actions_by_tick, divergence, read_log, replay_view, ticks

EPISODE = {"level": "BabyAI-GoTo-v0", "seed": 1001, "episode_id": "BabyAI-GoTo-v0:1001", "max_steps": 300,
           "wall_seconds": 30.0}


def _logged(graph, episode, tmp_path, name):
    log = EpisodeLog()
    runner = GraphRunner(graph)
    try:
        result = runner.run_episode(episode, log)
    finally:
        runner.close()
    log.episode, log.result = episode, result
    path = log.write_jsonl(tmp_path / f"{name}.jsonl")
    return result, read_log(path)[1]


def test_divergence_of_two_graphs_differing_in_one_node_is_that_nodes_first_changed_output(seed_graph, tmp_path):
    child_graph = apply_patch(copy.deepcopy(seed_graph),
                              {"ops": [{"op": "set_config", "node": "explore", "pointer": "/hand", "value": "left"}]})
    _, parent = _logged(seed_graph, EPISODE, tmp_path, "parent")
    _, child = _logged(child_graph, EPISODE, tmp_path, "child")
    point = divergence(parent, child)
    assert point is not None and point["node"] == "explore" and point["why"] == "outputs differ"
    # recount: the first firing of `explore` whose outputs differ, and nothing differs before it
    explore_p = [f for f in parent if f["node"] == "explore"]
    explore_c = [f for f in child if f["node"] == "explore"]
    first = next(i for i, (p, c) in enumerate(zip(explore_p, explore_c)) if p["outputs"] != c["outputs"])
    assert point["tick"] == explore_c[first]["tick"] and point["child_outputs"] == explore_c[first]["outputs"]
    before = child.index(explore_c[first])
    assert all(p["outputs"] == c["outputs"] for p, c in zip(parent[:before], child[:before]))
    assert point["first_action_tick"] >= point["tick"]
    assert divergence(parent, parent) is None


def test_tick_view_and_rendered_state_by_replay(seed_graph, tmp_path):
    _, firings = _logged(seed_graph, EPISODE, tmp_path, "seed")
    view = ticks(firings, only=2)
    assert [t["tick"] for t in view] == [2] and view[0]["actions"] and view[0]["nodes"]
    rendered = replay_view(seed_graph, None, EPISODE, 2, actions_by_tick(firings), "babyai")
    assert rendered["note"] is None  # the seed graph is deterministic: the replay matches the log
    lines = rendered["rendered"].splitlines()
    assert "true grid at tick 2" in lines[0] and "belief map of node 'memory'" in lines[0]
    body = "\n".join(lines[1:-1])
    assert any(arrow in body for arrow in (">>", "<<", "^^", "VV")) and "WE" in body  # grey walls
    assert lines[-1].startswith("legend: ") and "W wall" in lines[-1] and "E grey" in lines[-1]


def test_rendered_colours_are_unambiguous_and_named_in_the_legend():
    """Green and grey both start with G: each colour has its own code, and the legend names the codes."""
    import numpy as np

    from executors.babyai import render, world as W
    from minigrid.core.constants import COLOR_TO_IDX, OBJECT_TO_IDX

    grid = np.zeros((W.MAP_SIZE, W.MAP_SIZE, 3), dtype=np.uint8)
    grid[0, 0] = (OBJECT_TO_IDX["key"], COLOR_TO_IDX["green"], 0)
    grid[1, 0] = (OBJECT_TO_IDX["key"], COLOR_TO_IDX["grey"], 0)
    grid[2, 0] = (OBJECT_TO_IDX["ball"], COLOR_TO_IDX["purple"], 0)
    (row,) = render.render_map(grid, None)
    cells = [row[i:i + 2] for i in range(0, len(row), 2)]
    assert cells[0] != cells[1] and cells[0][0] == cells[1][0] == "K"
    legend = render.legend(grid)
    for cell, colour in zip(cells, ("green", "grey", "purple")):
        assert f"{cell[1]} {colour}" in legend
    assert "K key" in legend and "A ball" in legend and "red" not in legend


def test_the_oracle_gets_the_wall_budget_even_inside_one_planning_call():
    # the bot loops without end on this episode (over 60 s before the cap)
    result = load_executor("babyai").oracle({"level": "BabyAI-Unlock-v0", "seed": 10002, "max_steps": 300,
                                             "wall_seconds": 1.0, "episode_id": "BabyAI-Unlock-v0:10002"})
    assert result["termination"] == "wall_time" and not result["success"] and result["wall_seconds"] < 5


def test_stochastic_mode_slips_are_seeded_per_noise_seed(seed_graph, tmp_path):
    noisy = dict(EPISODE, slip=0.3, noise_seed=1)
    a, fa = _logged(seed_graph, noisy, tmp_path, "a")
    b, fb = _logged(seed_graph, dict(noisy), tmp_path, "b")
    c, fc = _logged(seed_graph, dict(noisy, noise_seed=2), tmp_path, "c")
    executed = lambda firings: [f["outputs"]["feedback"] for f in firings if f["node"] == "sim"]
    assert executed(fa) == executed(fb) and a == {**b, "wall_seconds": a["wall_seconds"]}
    assert executed(fa) != executed(fc)
    tiers = load_executor("babyai").profile["tiers"]
    assert tiers["search-noisy"]["slip"] == 0.1
    assert all(e["slip"] == 0.1 for e in load_executor("babyai").episodes("search-noisy"))
    json.dumps(noisy)  # an episode spec stays plain JSON (it is part of the cache key)


def test_the_simulators_claim_of_fresh_outputs_holds_its_deferred_log_equals_an_eager_snapshot(seed_graph):
    with GraphRunner(seed_graph) as runner:
        assert runner.nodes["sim"].fresh_outputs
        logged, eager = deferred_and_eager(runner, EPISODE)
    assert len(logged) > 50 and sum(r[0] == "sim" for r in logged) > 20
    assert logged == eager

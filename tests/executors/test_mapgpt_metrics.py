"""R2R metrics against hand-computed values on a real fixture scan."""

from __future__ import annotations

import math

import pytest
from mapgpt_testkit import FIXTURE

from executors.mp3d.data_r2r import Dataset
from executors.mp3d.metrics import score_trajectory, viewpoint_path

DS = Dataset(FIXTURE / "r2r")


@pytest.fixture(scope="module")
def episode():
    item = next(i for i in DS.split("val_unseen").values() if len(i["path"]) >= 5)
    return item, DS.graph(item["scan"])


def test_the_reference_path_scores_perfectly(episode):
    item, graph = episode
    turns = [[vp, 0.0, 0.0] for vp in item["path"] for _ in range(2)]   # turning in place repeats a viewpoint
    scores = score_trajectory(graph, turns, item["path"])
    assert viewpoint_path(turns) == item["path"]
    assert scores["success"] == 1.0 and scores["spl"] == pytest.approx(1.0) and scores["ndtw"] == pytest.approx(1.0)
    assert scores["nav_error"] == 0.0 and scores["trajectory_steps"] == len(item["path"]) - 1
    assert scores["trajectory_length"] == pytest.approx(scores["reference_length"])
    assert scores["cls"] == pytest.approx(1.0)


def test_stopping_early_and_detours(episode):
    item, graph = episode
    path = item["path"]
    early = score_trajectory(graph, path[:2], path)
    ne = graph.distance(path[1], path[-1])
    assert early["nav_error"] == pytest.approx(ne)
    assert early["success"] == float(ne < 3.0) and early["oracle_success"] == early["success"]
    d = [[graph.distance(p, r) for r in path] for p in path[:2]]
    dtw = d[0][0] + d[1][1] + sum(d[1][j] for j in range(2, len(path)))     # the only warping path
    assert early["ndtw"] == pytest.approx(math.exp(-dtw / (len(path) * 3.0)))
    back = path + [path[-2], path[-1], path[-2]]                              # passes the goal, ends next to it
    detour = score_trajectory(graph, back, path)
    assert detour["oracle_success"] == 1.0 and detour["oracle_error"] == 0.0
    reference = detour["reference_length"]
    length = reference + 3 * graph.distance(path[-2], path[-1])
    assert detour["trajectory_length"] == pytest.approx(length)
    assert detour["spl"] == pytest.approx(detour["success"] * reference / length)
    assert detour["sdtw"] == pytest.approx(detour["success"] * detour["ndtw"])


def test_a_trajectory_must_start_at_the_start(episode):
    item, graph = episode
    with pytest.raises(ValueError, match="start"):
        score_trajectory(graph, item["path"][1:], item["path"])


def test_results_file_of_the_real_shortest_path_teacher_scores_as_r2r_reports():
    from executors.mp3d.metrics import score_results

    results = DS.shortest_trajectories()
    scored = score_results(results, "val_unseen", DS)
    assert scored["n"] == len(results) > 0
    assert scored["summary"]["success"] == 100.0 and scored["summary"]["spl"] == pytest.approx(100.0)
    assert scored["summary"]["nav_error"] == 0.0 and 99.0 < scored["summary"]["ndtw"] <= 100.0

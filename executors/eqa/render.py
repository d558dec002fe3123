"""The episode viewer's picture of an EQA episode (harness/report): the scan's
viewpoint graph from above with the agent's path, the shortest path from the
start to the nearest evidence viewpoint as the reference, and each evidence
viewpoint with its 3 m radius (executors.mp3d.render)."""

from __future__ import annotations

from executors.eqa.questions import question_set
from executors.mp3d import data_r2r as D
from executors.mp3d.render import route_frames


def render_episode(data) -> list[dict]:
    item = question_set().question(data.episode["question_id"])
    start, evidence = item["start"]["viewpoint"], list(item["evidence"])
    graph = D.dataset().graph(item["scan"])
    reference = graph.path(start, min(evidence, key=lambda vp: (graph.distance(start, vp), vp))) if evidence else []
    return route_frames(data, item["scan"], reference, evidence)

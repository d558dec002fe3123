"""The answer-reading oracle: it reads the question's true answer (privileged), walks the
shortest path to the nearest viewpoint its evidence is annotated at (none for an
existence question answered No), answers and stops. It is the ceiling of the tiers
(accuracy 1) and a floor for the steps an answer needs, not an agent."""

from __future__ import annotations

import time

from executors.eqa import accuracy_by_type
from executors.eqa.questions import QUESTION_SET_VERSION, question_set
from executors.mp3d import data_r2r as D
from executors.mp3d.walker import oracle_walker


def oracle(episode: dict) -> dict:
    started = time.perf_counter()
    item = question_set().question(episode["question_id"])
    data = D.dataset()
    walker = oracle_walker(data)
    walker.start(item["scan"], item["start"]["viewpoint"], item["start"]["heading"])
    graph = data.graph(item["scan"])
    here = item["start"]["viewpoint"]
    goal = min(item["evidence"], key=lambda vp: (graph.distance(here, vp), vp)) if item["evidence"] else here
    budget = episode.get("max_steps", item["max_steps"])
    path = graph.path(here, goal)[:budget]                  # leaves the last step for the stop
    for viewpoint in path[1:]:
        walker.move_to(viewpoint)
    length = sum(graph.distance(a, b) for a, b in zip(path[:-1], path[1:]))
    moves = len(path) - 1
    metrics = {"accuracy": 1.0, **accuracy_by_type(item["type"], 1.0), "question_id": item["question_id"],
               "type": item["type"], "scan": item["scan"], "answer": item["answer"], "truth": item["answer"],
               "answered": True, "invalid_answers": 0, "moves": moves, "budget": episode.get("max_steps"),
               "path_length": float(length), "stopped": True, "ended": "stopped", "start": here,
               "trajectory": walker.trajectory, "question_set_version": QUESTION_SET_VERSION, **walker.provenance()}
    return {"success": True, "reward": 1.0, "steps": moves + 1, "ticks": moves + 1, "termination": "success",
            "error": None, "metrics": metrics, "model_calls": 0, "input_tokens": 0, "output_tokens": 0,
            "cost_usd": 0.0, "wall_seconds": time.perf_counter() - started}

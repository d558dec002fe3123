"""The shortest-path oracle on SmartWay's waypoint actions: it moves to the neighbour next
on the shortest path to the goal and stops there. It reads the goal (privileged), so it is
the ceiling of the tiers, not an agent."""

from __future__ import annotations

import time

from executors.mp3d import data_r2r as D
from executors.mp3d.metrics import score_trajectory
from executors.mp3d.walker import oracle_walker


def oracle(episode: dict) -> dict:
    started = time.perf_counter()
    data = D.dataset()
    item = data.episode(episode["split"], episode["instr_id"])
    walker = oracle_walker(data)
    walker.start(item["scan"], item["path"][0], item["heading"])
    graph = data.graph(item["scan"])
    route = graph.path(item["path"][0], item["path"][-1])[1:episode.get("max_steps", 15)]
    for viewpoint in route:
        walker.move_to(viewpoint)
    scores = score_trajectory(graph, walker.trajectory, item["path"], stopped=True)
    metrics = {k: v for k, v in scores.items() if k != "success"}
    metrics.update(moves=len(route), stopped=True, ended="stopped", instr_id=item["instr_id"], scan=item["scan"],
                   trajectory=walker.trajectory, **walker.provenance())
    return {"success": bool(scores["success"]), "reward": scores["spl"], "steps": len(route) + 1,
            "ticks": len(route) + 1, "termination": "success" if scores["success"] else "sim_done", "error": None,
            "metrics": metrics, "model_calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
            "wall_seconds": time.perf_counter() - started}

"""The shortest-path oracle on MapGPT's action interface: at each step it takes
the candidate that is next on the shortest path to the goal (turning until that
candidate's view is current, as the agent does) and stops at the goal. It reads
the goal (privileged), so it is the ceiling of the tiers, not an agent."""

from __future__ import annotations

import time

from executors.mapgpt.nodes.simulator import MAX_ACTIONS
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
    goal = item["path"][-1]
    steps = decisions = 0
    while walker.viewpoint != goal and decisions < MAX_ACTIONS:
        steps += walker.move_to(graph.path(walker.viewpoint, goal)[1])
        decisions += 1
    scores = score_trajectory(graph, walker.trajectory, item["path"])
    metrics = {k: v for k, v in scores.items() if k != "success"}
    metrics.update(decisions=decisions, stopped=True, ended="stopped", instr_id=item["instr_id"], scan=item["scan"],
                   trajectory=walker.trajectory, **walker.provenance())
    return {"success": bool(scores["success"]), "reward": scores["spl"], "steps": steps + 1, "ticks": decisions + 1,
            "termination": "success" if scores["success"] else "sim_done", "error": None, "metrics": metrics,
            "model_calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
            "wall_seconds": time.perf_counter() - started}

"""The shortest-path oracle on MapGPT's action interface: at each step it takes
the candidate that is next on the shortest path to the goal (turning until that
candidate's view is current, as the agent does) and stops at the goal. It reads
the goal (privileged), so it is the ceiling of the tiers, not an agent."""

from __future__ import annotations

import time

from executors.mapgpt import data as D
from executors.mapgpt.metrics import score_trajectory
from executors.mapgpt.nodes.action import turn_then_move
from executors.mapgpt.nodes.candidates import CandidateBuilder
from executors.mapgpt.nodes.simulator import MAX_ACTIONS, provenance_fields
from executors.mapgpt.panorama import sweep
from executors.mapgpt.sim import new_simulator

_sims: dict = {}


def _simulators(root):
    key = str(root)
    if key not in _sims:
        _sims[key] = (new_simulator(root / "connectivity", backend="graph"),
                      new_simulator(root / "connectivity", backend="graph"))
    return _sims[key]


def oracle(episode: dict) -> dict:
    started = time.perf_counter()
    data = D.dataset()
    item = data.episode(episode["split"], episode["instr_id"])
    D.require(D.scan_files(item["scan"]), data.root)
    graph = data.graph(item["scan"])
    sim, sweeper = _simulators(data.root)
    builder = CandidateBuilder("oracle_candidates")
    goal = item["path"][-1]
    sim.newEpisode([item["scan"]], [item["path"][0]], [item["heading"]], [0.0])
    state = sim.getState()[0]
    trajectory = [[state.location.viewpointId, state.heading, state.elevation]]
    steps = decisions = 0
    while state.location.viewpointId != goal and decisions < MAX_ACTIONS:
        here = state.location.viewpointId
        nxt = graph.path(here, goal)[1]
        panorama = {"viewpoint": here, "views": sweep(sweeper, item["scan"], here, None)}
        candidates = {c["viewpoint"]: c for c in builder.step({"panorama": panorama}, None)["candidates"]}
        for index, heading, elevation in turn_then_move(state.viewIndex, candidates[nxt]):
            sim.makeAction([index], [heading], [elevation])
            state = sim.getState()[0]
            trajectory.append([state.location.viewpointId, state.heading, state.elevation])
            steps += 1
        decisions += 1
    scores = score_trajectory(graph, trajectory, item["path"])
    metrics = {k: v for k, v in scores.items() if k != "success"}
    metrics.update(decisions=decisions, stopped=True, ended="stopped", instr_id=item["instr_id"], scan=item["scan"],
                   trajectory=trajectory, **provenance_fields(sim))
    return {"success": bool(scores["success"]), "reward": scores["spl"], "steps": steps + 1, "ticks": decisions + 1,
            "termination": "success" if scores["success"] else "sim_done", "error": None, "metrics": metrics,
            "model_calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
            "wall_seconds": time.perf_counter() - started}

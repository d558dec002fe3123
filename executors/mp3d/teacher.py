"""R2R's shortest-path teacher on a MatterSim-compatible simulator.

At every step it looks at the next viewpoint of the shortest path: if that
viewpoint is among the navigable locations it turns (30° steps) or tilts until
it is within 30° of the view centre and then moves to it; if it is not
visible it first levels the camera, then turns towards it the shorter way
round. Replaying it yields `[viewpoint, heading, elevation]` per step, the
format of R2R's result files — the fidelity check of a backend against the
real simulator's trajectories.
"""

from __future__ import annotations

import math

from executors.mp3d.graph import ScanGraph

STOP = (0, 0, 0)


def teacher_action(state, graph: ScanGraph, goal: str) -> tuple[int, int, int]:
    """The next (index, heading, elevation) action towards `goal`; STOP when there."""
    here = state.location.viewpointId
    if here == goal:
        return STOP
    nxt = graph.path(here, goal)[1]
    row = state.viewIndex // 12
    for i, loc in enumerate(state.navigableLocations):
        if loc.viewpointId == nxt:
            if loc.rel_heading > math.pi / 6.0:
                return (0, 1, 0)
            if loc.rel_heading < -math.pi / 6.0:
                return (0, -1, 0)
            if loc.rel_elevation > math.pi / 6.0 and row < 2:
                return (0, 0, 1)
            if loc.rel_elevation < -math.pi / 6.0 and row > 0:
                return (0, 0, -1)
            return (i, 0, 0)
    if row == 0:
        return (0, 0, 1)
    if row == 2:
        return (0, 0, -1)
    x, y, _ = graph.position(nxt)
    dx, dy = x - state.location.x, y - state.location.y
    target = math.pi / 2.0 - math.atan2(dy, dx)
    if target < 0:
        target += 2.0 * math.pi
    if state.heading > target and state.heading - target < math.pi:
        return (0, -1, 0)
    if target > state.heading and target - state.heading > math.pi:
        return (0, -1, 0)
    return (0, 1, 0)


def replay(sim, graph: ScanGraph, scan: str, path: list[str], heading: float, max_steps: int = 200) -> list[list]:
    """The teacher's trajectory from path[0] to path[-1]: [[viewpoint, heading, elevation], ...]."""
    sim.newEpisode([scan], [path[0]], [heading], [0.0])
    state = sim.getState()[0]
    trajectory = [[state.location.viewpointId, state.heading, state.elevation]]
    for _ in range(max_steps):
        action = teacher_action(state, graph, path[-1])
        if action == STOP:
            return trajectory
        sim.makeAction([action[0]], [action[1]], [action[2]])
        state = sim.getState()[0]
        trajectory.append([state.location.viewpointId, state.heading, state.elevation])
    raise RuntimeError(f"teacher did not reach {path[-1]} within {max_steps} steps")

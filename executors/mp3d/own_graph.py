"""Routes over an agent's own graph: the neighbour lists it recorded at the places it
visited and the positions it saw, never the scan's full navigation graph."""

from __future__ import annotations

import heapq
import math


def shortest_route(edges: dict[str, list[str]], positions: dict[str, list[float]], start: str,
                   goal: str) -> list[str] | None:
    """The shortest path from `start` to `goal` (straight-line lengths between positions),
    both ends included; None when the recorded edges do not connect them."""
    best, previous, queue = {start: 0.0}, {}, [(0.0, start)]
    while queue:
        cost, here = heapq.heappop(queue)
        if here == goal:
            path = [goal]
            while path[-1] != start:
                path.append(previous[path[-1]])
            return path[::-1]
        if cost > best.get(here, math.inf):
            continue
        for nxt in edges.get(here, []):
            step = cost + math.dist(positions[here], positions[nxt])
            if step < best.get(nxt, math.inf):
                best[nxt], previous[nxt] = step, here
                heapq.heappush(queue, (step, nxt))
    return None

"""One scan's navigation graph, read from its MatterSim connectivity JSON.

Positions are kept in float32 exactly as MatterSim's NavGraph reads them
(`asFloat` of the pose's translation column), so that angles computed from
them match the real simulator bit for bit. Shortest-path distances (edge
weight = Euclidean distance between the JSON's double-precision positions, as
R2R's `load_nav_graphs` computes them) come from scipy's Dijkstra, per scan
and only when first asked for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class ScanGraph:
    scan: str
    ids: list[str]                      # viewpoint ids in file order (MatterSim's `ix`)
    index: dict[str, int]
    included: np.ndarray                # bool[N]
    pos32: np.ndarray                   # float32[N, 3]: MatterSim's camera positions
    pos64: np.ndarray                   # float64[N, 3]: the JSON's positions (R2R's graph)
    neighbours: list[list[int]]         # unobstructed and included, in file order
    _dist: np.ndarray | None = field(default=None, repr=False)
    _pred: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def from_file(cls, scan: str, path: Path) -> "ScanGraph":
        return cls.from_records(scan, json.loads(Path(path).read_text(encoding="utf-8")))

    @classmethod
    def from_records(cls, scan: str, records: list[dict]) -> "ScanGraph":
        ids = [r["image_id"] for r in records]
        included = np.array([bool(r["included"]) for r in records])
        pos64 = np.array([[r["pose"][3], r["pose"][7], r["pose"][11]] for r in records], dtype=np.float64)
        pos32 = pos64.astype(np.float32)
        neighbours = []
        for ix, r in enumerate(records):
            neighbours.append([i for i, free in enumerate(r["unobstructed"]) if free and i != ix and included[i]])
        return cls(scan, ids, {vp: i for i, vp in enumerate(ids)}, included, pos32, pos64, neighbours)

    def ix(self, viewpoint: str) -> int:
        try:
            ix = self.index[viewpoint]
        except KeyError:
            raise KeyError(f"viewpoint {viewpoint!r} is not in scan {self.scan}") from None
        if not self.included[ix]:
            raise ValueError(f"viewpoint {viewpoint!r} of scan {self.scan} is excluded from the navigation graph")
        return ix

    # -- shortest paths (R2R's graph: included viewpoints, unobstructed edges) --------
    def _solve(self) -> None:
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import dijkstra

        rows, cols, weights = [], [], []
        for ix, adj in enumerate(self.neighbours):
            if not self.included[ix]:
                continue
            for i in adj:
                rows.append(ix)
                cols.append(i)
                weights.append(float(np.sqrt(((self.pos64[ix] - self.pos64[i]) ** 2).sum())))
        n = len(self.ids)
        matrix = csr_matrix((weights, (rows, cols)), shape=(n, n))
        self._dist, self._pred = dijkstra(matrix, directed=True, return_predecessors=True)

    def distance(self, a: str, b: str) -> float:
        """Shortest-path distance in metres between two viewpoints (inf if unreachable)."""
        if self._dist is None:
            self._solve()
        return float(self._dist[self.index[a], self.index[b]])

    def path(self, a: str, b: str) -> list[str]:
        """Viewpoints of a shortest path from a to b, both ends included."""
        if self._dist is None:
            self._solve()
        start, goal = self.index[a], self.index[b]
        if start != goal and not np.isfinite(self._dist[start, goal]):
            raise ValueError(f"no path from {a} to {b} in scan {self.scan}")
        out = [goal]
        while out[-1] != start:
            out.append(int(self._pred[start, out[-1]]))
        return [self.ids[i] for i in reversed(out)]

    def position(self, viewpoint: str) -> tuple[float, float, float]:
        return tuple(float(v) for v in self.pos64[self.index[viewpoint]])

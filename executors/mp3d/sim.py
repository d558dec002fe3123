"""A MatterSim-compatible simulator: the real `MatterSim` module when it is
importable, else a pure-Python graph backend over the connectivity JSON.

The graph backend has MatterSim's Python API (the batched one MapGPT uses):
`Simulator()`, the `set*` configuration calls, `initialize()`,
`newEpisode([scan], [viewpoint], [heading], [elevation])`, `getState()` (a list
of `SimState`), `makeAction([index], [heading], [elevation])`. Rendering is
off: `rgb` is None. It ports MatterSim.cpp's `setHeadingElevation` (30°
heading steps, elevations snapped to -30°/0°/+30°, `viewIndex = 12·row +
heading step`), `makeAction` (sign-only turns in discretised mode) and
`populateNavigable` (index 0 = the current viewpoint, then the unobstructed
neighbours whose horizontal direction lies within half the horizontal field
of view of the camera heading, sorted by angular distance from the view
centre). The float arithmetic follows the C++ code (glm single-precision
vectors, double angles), so headings, elevations and candidate orders match
the real simulator's.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from executors.mp3d.graph import ScanGraph

HEADING_COUNT = 12
HEADING_INCREMENT = math.pi * 2.0 / HEADING_COUNT
ELEVATION_INCREMENT = math.pi / 6.0
_F0 = np.float32(0.0)
_F1 = np.float32(1.0)


@dataclass
class ViewPoint:
    viewpointId: str
    ix: int
    x: float
    y: float
    z: float
    rel_heading: float = 0.0
    rel_elevation: float = 0.0
    rel_distance: float = 0.0


@dataclass
class SimState:
    scanId: str
    location: ViewPoint
    heading: float = 0.0
    elevation: float = 0.0
    viewIndex: int = 0
    step: int = 0
    navigableLocations: list = field(default_factory=list)
    rgb: object = None
    depth: object = None


_graphs: dict[tuple[str, str], ScanGraph] = {}
_graphs_lock = threading.Lock()


def load_scan_graph(nav_graph_path: str | Path, scan: str) -> ScanGraph:
    """One scan's graph from `<nav_graph_path>/<scan>_connectivity.json`, read once per process."""
    key = (str(nav_graph_path), scan)
    graph = _graphs.get(key)
    if graph is None:
        path = Path(nav_graph_path) / f"{scan}_connectivity.json"
        if not path.is_file():
            raise FileNotFoundError(f"MatterSim: could not open navigation graph file: {path}")
        graph = ScanGraph.from_file(scan, path)
        with _graphs_lock:
            graph = _graphs.setdefault(key, graph)
    return graph


class _Neighbours:
    """Per-viewpoint neighbour geometry in glm's float32 arithmetic (independent of the camera)."""

    __slots__ = ("ix", "tx", "ty", "distance", "elevation", "nx", "ny", "points")

    def __init__(self, graph: ScanGraph, idx: int):
        adj = graph.neighbours[idx]
        self.ix = adj
        target = graph.pos32[adj] - graph.pos32[idx]              # glm::vec3 difference
        tx, ty, tz = target[:, 0], target[:, 1], target[:, 2]
        xy = tx * tx + ty * ty + _F0 * _F0                          # glm::dot with z projected to 0
        self.tx, self.ty = tx, ty
        self.distance = np.sqrt(tx * tx + ty * ty + tz * tz)       # glm::length (float)
        self.elevation = [math.atan2(float(z), float(v)) for z, v in zip(tz, np.sqrt(xy))]
        inv = _F1 / np.sqrt(xy)                                     # glm::normalize = v * inversesqrt(dot(v, v))
        self.nx, self.ny = tx * inv, ty * inv
        self.points = [graph.pos32[i] for i in adj]


class GraphSimulator:
    """MatterSim's Simulator over the navigation graphs alone (rendering off)."""

    backend = "graph"

    def __init__(self, graph_loader: Callable[[str], ScanGraph] | None = None):
        self._loader = graph_loader
        self.nav_graph_path = "./connectivity"
        self.width, self.height, self.vfov = 320, 240, 0.8
        self.discretized = False
        self.rendering = True
        self.batch_size = 1
        self.min_elevation, self.max_elevation = -0.94, 0.94
        self.initialized = False
        self.states: list[SimState] = []
        self._geometry: dict[tuple[str, int], _Neighbours] = {}
        self._navigable_cache: dict[tuple, list[tuple]] = {}

    # -- configuration (MatterSim's names) ----------------------------------------------
    def setNavGraphPath(self, path):
        self.nav_graph_path = str(path)

    def setDatasetPath(self, path):
        self.dataset_path = str(path)

    def setRenderingEnabled(self, value: bool):
        self.rendering = bool(value)

    def setDiscretizedViewingAngles(self, value: bool):
        self.discretized = bool(value)

    def setCameraResolution(self, width: int, height: int):
        self.width, self.height = int(width), int(height)

    def setCameraVFOV(self, vfov: float):
        self.vfov = float(vfov)

    def setBatchSize(self, size: int):
        self.batch_size = int(size)

    def setPreloadingEnabled(self, value: bool):
        pass

    def setDepthEnabled(self, value: bool):
        pass

    def setCacheSize(self, size: int):
        pass

    def setElevationLimits(self, low: float, high: float) -> bool:
        if -math.pi / 2 < low < 0.0 < high < math.pi / 2:
            self.min_elevation, self.max_elevation = low, high
            return True
        return False

    def initialize(self):
        if self.rendering:
            raise RuntimeError("the graph backend cannot render: call setRenderingEnabled(False) "
                               "(install MatterSim and the Matterport3D skyboxes for images)")
        self.initialized = True

    # -- episodes ------------------------------------------------------------------------
    def graph(self, scan: str) -> ScanGraph:
        if self._loader is not None:
            return self._loader(scan)
        return load_scan_graph(self.nav_graph_path, scan)

    def newEpisode(self, scanIds, viewpointIds, headings, elevations):
        if not self.initialized:
            self.initialize()
        if not (len(scanIds) == len(viewpointIds) == len(headings) == len(elevations) == self.batch_size):
            raise ValueError(f"newEpisode: expected {self.batch_size} scan/viewpoint/heading/elevation values")
        self.states = []
        for scan, vp, heading, elevation in zip(scanIds, viewpointIds, headings, elevations):
            graph = self.graph(scan)
            ix = graph.ix(vp)
            x, y, z = (float(v) for v in graph.pos32[ix])
            state = SimState(scanId=scan, location=ViewPoint(vp, ix, x, y, z))
            self._set_heading_elevation(state, heading, elevation)
            self._populate_navigable(state)
            self.states.append(state)

    def getState(self) -> list[SimState]:
        return self.states

    def makeAction(self, index, heading, elevation):
        if not self.states:
            raise RuntimeError("MatterSim: newEpisode must be called before makeAction")
        for state, i, h, e in zip(self.states, index, heading, elevation):
            i = int(i)
            if i < 0 or i >= len(state.navigableLocations):
                raise IndexError(f"MatterSim: Invalid action index: {i}")
            target = state.navigableLocations[i]
            state.location = ViewPoint(target.viewpointId, target.ix, target.x, target.y, target.z)
            state.step += 1
            h, e = float(h), float(e)
            if self.discretized:
                h = HEADING_INCREMENT if h > 0 else (-HEADING_INCREMENT if h < 0 else 0.0)
                e = ELEVATION_INCREMENT if e > 0 else (-ELEVATION_INCREMENT if e < 0 else 0.0)
            self._set_heading_elevation(state, state.heading + h, state.elevation + e)
            self._populate_navigable(state)

    # -- ports of MatterSim.cpp --------------------------------------------------------------
    def _set_heading_elevation(self, state: SimState, heading: float, elevation: float) -> None:
        heading = math.fmod(heading, math.pi * 2.0)
        while heading < 0.0:
            heading += math.pi * 2.0
        if not self.discretized:
            state.heading = heading
            state.elevation = max(min(elevation, self.max_elevation), self.min_elevation)
            return
        step = _lround(heading / HEADING_INCREMENT)
        if step == HEADING_COUNT:
            step = 0
        state.heading = float(step) * HEADING_INCREMENT
        if elevation < -ELEVATION_INCREMENT / 2.0:
            state.elevation, state.viewIndex = -ELEVATION_INCREMENT, step
        elif elevation > ELEVATION_INCREMENT / 2.0:
            state.elevation, state.viewIndex = ELEVATION_INCREMENT, step + 2 * HEADING_COUNT
        else:
            state.elevation, state.viewIndex = 0.0, step + HEADING_COUNT

    def _populate_navigable(self, state: SimState) -> None:
        graph = self.graph(state.scanId)
        idx = state.location.ix
        key = (state.scanId, idx, state.heading, state.elevation, self.vfov, self.width, self.height)
        found = self._navigable_cache.get(key)
        if found is None:
            found = self._visible(graph, idx, state.heading, state.elevation)
            if len(self._navigable_cache) > 200_000:
                self._navigable_cache.clear()
            self._navigable_cache[key] = found
        out = [state.location]
        for i, vp, x, y, z, rel_heading, rel_elevation, distance in found:
            out.append(ViewPoint(vp, i, x, y, z, rel_heading, rel_elevation, distance))
        state.navigableLocations = out

    def _visible(self, graph: ScanGraph, idx: int, heading: float, elevation: float) -> list[tuple]:
        geo = self._geometry.get((graph.scan, idx))
        if geo is None:
            geo = self._geometry[(graph.scan, idx)] = _Neighbours(graph, idx)
        adjusted = math.pi / 2.0 - heading
        hx, hy = np.float32(math.cos(adjusted)), np.float32(math.sin(adjusted))
        cos_half_hfov = math.cos(self.vfov * self.width / self.height / 2.0)
        cos_angle = geo.nx * hx + geo.ny * hy + _F0 * _F0
        cross = geo.tx * hy - geo.ty * hx
        dot = geo.tx * hx + geo.ty * hy
        found = []
        for k, i in enumerate(geo.ix):
            if float(cos_angle[k]) >= cos_half_hfov:
                rel_heading = math.atan2(float(cross[k]), float(dot[k]))
                point = geo.points[k]
                found.append((i, graph.ids[i], float(point[0]), float(point[1]), float(point[2]),
                              rel_heading, geo.elevation[k] - elevation, float(geo.distance[k])))
        found.sort(key=lambda f: math.sqrt(f[5] * f[5] + f[6] * f[6]))
        return found


def _lround(value: float) -> int:
    """C's lround: halfway cases away from zero."""
    return int(math.floor(value + 0.5)) if value >= 0 else -int(math.floor(-value + 0.5))


def real_mattersim_available() -> bool:
    try:
        import MatterSim  # noqa: F401
    except ImportError:
        return False
    return True


def new_simulator(nav_graph_path: str | Path, *, backend: str = "auto", width: int = 640, height: int = 480,
                  vfov_degrees: float = 60.0, rendering: bool = False, dataset_path: str | Path | None = None):
    """A discretised-view simulator configured as R2R and MapGPT configure theirs
    (640x480, 60° vertical field of view, batch size 1). `backend`: "auto"
    (the real MatterSim when importable), "mattersim" or "graph"."""
    if backend not in ("auto", "mattersim", "graph"):
        raise ValueError(f"unknown simulator backend {backend!r} (auto, mattersim, graph)")
    use_real = backend == "mattersim" or (backend == "auto" and real_mattersim_available())
    if use_real:
        import MatterSim

        sim = MatterSim.Simulator()
        if dataset_path is not None:
            sim.setDatasetPath(str(dataset_path))
    else:
        sim = GraphSimulator()
    sim.setNavGraphPath(str(nav_graph_path))
    sim.setRenderingEnabled(bool(rendering))
    sim.setDiscretizedViewingAngles(True)
    sim.setCameraResolution(width, height)
    sim.setCameraVFOV(math.radians(vfov_degrees))
    sim.setBatchSize(1)
    sim.initialize()
    return sim


def backend_name(sim) -> str:
    return getattr(sim, "backend", "mattersim")

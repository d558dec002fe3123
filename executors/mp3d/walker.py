"""An agent's body on the Matterport3D graphs, shared by the navigation executors.

One MatterSim-compatible simulator moves the agent; a second sweeps the 36
views of a viewpoint (`panorama.sweep`, cached per viewpoint) so that looking
around never turns the agent. The trajectory is kept as R2R's result files
hold it (`[viewpoint, heading, elevation]` after every MatterSim action).
Moving to a navigable neighbour is done as MapGPT does it: tilt to the row of
the neighbour's nearest-centre view, turn right until that view is current,
then `makeAction` with the neighbour's navigable index.
"""

from __future__ import annotations

from executors.mp3d import data_r2r as D
from executors.mp3d.panorama import nearest_centre_candidates, sweep
from executors.mp3d.sim import backend_name, new_simulator

UP, DOWN, RIGHT = [0, 0, 1], [0, 0, -1], [0, 1, 0]
PANORAMA_CACHE = 4096   # viewpoints whose sweep is kept per walker


class NotNavigable(ValueError):
    """A move to a viewpoint that is not a navigable neighbour of the current one."""


def turn_then_move(view_index: int, candidate: dict) -> list[list[int]]:
    """Tilt to the candidate view's row, turn right until its view is the current
    one, then move with its navigable index (MapGPT's make_equiv_action)."""
    actions = []
    row, target_row = view_index // 12, candidate["view_index"] // 12
    while row < target_row:
        actions.append(UP)
        row += 1
    while row > target_row:
        actions.append(DOWN)
        row -= 1
    column = view_index % 12
    while column != candidate["view_index"] % 12:
        actions.append(RIGHT)
        column = (column + 1) % 12
    actions.append([candidate["nav_index"], 0, 0])
    return actions


def config_schema(privileged: str) -> dict:
    """The config schema of a simulator node driving a Walker (`privileged`: its privileged output)."""
    return {
        "type": "object",
        "properties": {
            "backend": {"enum": ["auto", "graph", "mattersim"], "default": "auto",
                        "description": "auto: the real MatterSim when importable, else the graph backend"},
            "observation": {"enum": ["text", "image"], "default": "text",
                            "description": "image: keep each view's RGB (real MatterSim with rendering only)"},
            "dataset_path": {"type": ["string", "null"], "default": None,
                             "description": "Matterport3D scans folder for image mode (MatterSim's setDatasetPath)"},
            "privileged_outputs": {"type": "boolean", "default": False,
                                   "description": f"emit {privileged} (scoring, debugging)"},
        },
        "additionalProperties": False,
    }


class Walker:
    """The simulators of one agent over one data folder. `backend`: auto (the real MatterSim
    when importable), graph or mattersim; `image_mode` keeps each view's RGB (real MatterSim
    with rendering only, else a ValueError on first use)."""

    def __init__(self, data: D.Dataset, *, backend: str = "auto", image_mode: bool = False,
                 dataset_path: str | None = None):
        self.data = data
        self.backend = backend
        self.image_mode = image_mode
        self.dataset_path = dataset_path
        self.sim = None
        self.sweeper = None
        self._panoramas: dict[tuple[str, str], list] = {}
        self.scan: str | None = None
        self.captions: dict = {}
        self.trajectory: list[list] = []

    def _simulators(self):
        if self.sim is None:
            D.require(["connectivity/scans.txt"], self.data.root)
            kwargs = {"backend": self.backend}
            if self.image_mode:
                if self.backend == "graph":
                    raise ValueError("observation 'image' needs the real MatterSim (backend mattersim); "
                                     "the graph backend renders nothing")
                kwargs.update(rendering=True, dataset_path=self.dataset_path)
            self.sim = new_simulator(self.data.connectivity, backend=self.backend)
            self.sweeper = new_simulator(self.data.connectivity, **kwargs)
            if self.image_mode and backend_name(self.sweeper) == "graph":
                raise ValueError("observation 'image' needs the real MatterSim; it is not importable here")
        return self.sim

    def start(self, scan: str, viewpoint: str, heading: float, elevation: float = 0.0) -> None:
        """A new episode at `viewpoint` (its scan's graph and captions must be installed)."""
        D.require(D.scan_files(scan), self.data.root)
        sim = self._simulators()
        self.scan = scan
        self.captions = self.data.captions(scan)
        sim.newEpisode([scan], [viewpoint], [heading], [elevation])
        self.trajectory = [self._pose()]

    @property
    def state(self):
        return self.sim.getState()[0]

    @property
    def viewpoint(self) -> str:
        return self.state.location.viewpointId

    def _pose(self) -> list:
        state = self.state
        return [state.location.viewpointId, state.heading, state.elevation]

    def act(self, index: int, heading: float, elevation: float) -> None:
        """One MatterSim action (`makeAction([index], [heading], [elevation])`), recorded."""
        self.sim.makeAction([int(index)], [float(heading)], [float(elevation)])
        self.trajectory.append(self._pose())

    def panorama(self, viewpoint: str | None = None) -> list[dict]:
        """The 36 views of a viewpoint (default: the current one) with captions and objects."""
        viewpoint = viewpoint or self.viewpoint
        key = (self.scan, viewpoint)
        views = self._panoramas.get(key)
        if views is None:
            views = sweep(self.sweeper, self.scan, viewpoint, self.captions, keep_images=self.image_mode)
            if len(self._panoramas) > PANORAMA_CACHE:
                self._panoramas.clear()
            self._panoramas[key] = views
        return views

    def move_to(self, viewpoint: str) -> int:
        """Turn towards a navigable neighbour and move there; the number of MatterSim actions."""
        candidates = {c["viewpoint"]: c for c in nearest_centre_candidates(self.panorama())}
        if viewpoint not in candidates:
            raise NotNavigable(f"{viewpoint!r} is not a navigable neighbour of {self.viewpoint!r} in scan {self.scan} "
                               f"(neighbours: {', '.join(sorted(candidates)) or 'none'})")
        actions = turn_then_move(self.state.viewIndex, candidates[viewpoint])
        for index, heading, elevation in actions:
            self.act(index, heading, elevation)
        return len(actions)

    def provenance(self) -> dict:
        """Which simulator backend and which data (manifest digest) produced a result."""
        return {"backend": backend_name(self.sim) if self.sim is not None else None,
                "data_sha256": D.manifest_digest()}

    def close(self) -> None:
        self.sim = self.sweeper = None


_oracle_walkers: dict[str, Walker] = {}


def oracle_walker(data: D.Dataset) -> Walker:
    """A graph-backend Walker over a data folder, one per process (the oracles walk with it)."""
    key = str(data.root)
    if key not in _oracle_walkers:
        _oracle_walkers[key] = Walker(data, backend="graph")
    return _oracle_walkers[key]

"""The graph backend against the real MatterSim: API shape, discretisation, and
replays of R2R's shortest-path teacher equal to the real simulator's trajectories."""

from __future__ import annotations

import json
import math

import pytest
from mapgpt_testkit import FIXTURE, full_data_dir, needs_full_data

from executors.mp3d.data_r2r import Dataset
from executors.mp3d.sim import GraphSimulator, new_simulator
from executors.mp3d.teacher import replay

FIXTURE_DATA = Dataset(FIXTURE / "r2r")


def _replays(ds: Dataset, trajectories: list[dict]) -> list[str]:
    sim = new_simulator(ds.connectivity, backend="graph")
    items = ds.split("val_unseen")
    wrong = []
    for record in trajectories:
        item = items[record["instr_id"]]
        got = replay(sim, ds.graph(item["scan"]), item["scan"], item["path"], item["heading"])
        if got != [list(step) for step in record["trajectory"]]:
            wrong.append(record["instr_id"])
    return wrong


def test_teacher_replays_match_the_real_simulator_on_the_fixture():
    trajectories = FIXTURE_DATA.shortest_trajectories()
    assert len(trajectories) >= 10
    assert _replays(FIXTURE_DATA, trajectories) == []


@needs_full_data
def test_teacher_replays_match_every_real_simulator_trajectory_we_have():
    ds = Dataset(full_data_dir())
    trajectories = ds.shortest_trajectories()
    assert len(trajectories) >= 700
    assert _replays(ds, trajectories) == []


def test_a_changed_field_of_view_changes_what_is_navigable():
    """The fidelity above depends on populateNavigable's field of view: a narrower camera sees less."""
    item = next(iter(FIXTURE_DATA.split("val_unseen").values()))
    counts = []
    for width in (640, 200):
        sim = new_simulator(FIXTURE_DATA.connectivity, backend="graph", width=width)
        seen = 0
        for heading_step in range(12):
            sim.newEpisode([item["scan"]], [item["path"][0]], [heading_step * math.pi / 6], [0.0])
            seen += len(sim.getState()[0].navigableLocations) - 1
        counts.append(seen)
    assert counts[0] > counts[1]


def test_mattersim_api_shape_and_discretised_views():
    item = next(iter(FIXTURE_DATA.split("val_unseen").values()))
    sim = new_simulator(FIXTURE_DATA.connectivity, backend="graph")
    sim.newEpisode([item["scan"]], [item["path"][0]], [0.4], [0.0])
    state = sim.getState()[0]
    assert state.heading == pytest.approx(math.pi / 6) and state.viewIndex == 13 and state.rgb is None
    assert state.navigableLocations[0].viewpointId == item["path"][0]
    angles = [math.hypot(loc.rel_heading, loc.rel_elevation) for loc in state.navigableLocations[1:]]
    assert angles == sorted(angles)
    assert all(abs(loc.rel_heading) <= math.radians(40) + 1e-6 for loc in state.navigableLocations[1:])
    sim.makeAction([0], [-7.0], [1.0])          # discretised: only the signs count
    state = sim.getState()[0]
    assert (state.heading, state.elevation, state.viewIndex) == (0.0, pytest.approx(math.pi / 6), 24)
    sim.makeAction([0], [-1.0], [1.0])          # elevation stays at +30 degrees
    state = sim.getState()[0]
    assert state.viewIndex == 35 and state.elevation == pytest.approx(math.pi / 6)
    with pytest.raises(IndexError, match="Invalid action index"):
        sim.makeAction([len(state.navigableLocations)], [0], [0])


def test_rendering_needs_the_real_simulator():
    sim = GraphSimulator()
    with pytest.raises(RuntimeError, match="cannot render"):
        sim.initialize()


def test_shipped_fixture_sample_is_a_subset_of_the_real_trajectories():
    trajectories = json.loads((FIXTURE / "r2r" / "val_unseen_shortest_agent.sample.json").read_text())
    assert {len(t["trajectory"][0]) for t in trajectories} == {3}

"""The mapgpt seed in SHAPER's decomposition: the route history, the seed's context harness
(which must rebuild exactly the sections the prompt builder no longer writes), the
registered planner stand-in and the SHAPER splits."""

from __future__ import annotations

import importlib.util

import pytest
from babyai_testkit import FakeCtx, make_node
from mapgpt_testkit import FIXTURE, SEEDS, full_data_dir, needs_full_data

import executors.mapgpt.node_types  # noqa: F401  (registers the mapgpt node types)
from executors import load_executor
from executors.mapgpt.stand_ins import scripted_mapgpt_planner
from executors.mp3d.data_r2r import Dataset
from executors.mp3d.panorama import sweep
from executors.mp3d.sim import new_simulator
from harness.executor_api import find_executor, load_ref
from harness.models.candidate_checks import candidate_violations
from harness.schemas import validate_instance

DS = Dataset(FIXTURE / "r2r")
HARNESS = SEEDS / "mapgpt" / "build_context.py"


def seed_build_context():
    spec = importlib.util.spec_from_file_location("mapgpt_seed_context", HARNESS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_context


def walk(moves: list):
    """Step through a fixture scan taking move option `moves[k]` at step k ("back": the one to
    the place before); per step yield the full prompt (every section on), the split prompt's
    parts, the instruction and the route history."""
    item = next(iter(DS.split("val_unseen").values()))
    sim = new_simulator(DS.connectivity, backend="graph")
    nodes = {name: make_node(f"mapgpt.{name}") for name in ("CandidateBuilder", "MapMemory", "RouteHistory",
                                                              "PlanningMemory")}
    full = make_node("mapgpt.PromptBuilder")
    split = make_node("mapgpt.PromptBuilder", {"show_instruction": False, "show_history": False, "show_map": False})
    ctx = FakeCtx()
    for node in nodes.values():
        node.reset(ctx)
    viewpoint, previous, choice, planning = item["path"][0], None, None, {}
    for step, move in enumerate(moves + [None]):
        panorama = {"viewpoint": viewpoint, "views": sweep(sim, item["scan"], viewpoint, DS.captions(item["scan"]))}
        cands = nodes["CandidateBuilder"].step({"panorama": panorama}, ctx)["candidates"]
        state = {"viewpoint": viewpoint, "heading": 0.0, "view_index": 12, "decisions": step}
        nav_map = nodes["MapMemory"].step({"state": state, "candidates": cands}, ctx)["map"]
        history = nodes["RouteHistory"].step({"map": nav_map, "candidates": cands,
                                              **({"choice": choice} if choice else {})}, ctx)["history"]
        inputs = {"instruction": item["instruction"], "map": nav_map, "candidates": cands, "state": state, **planning}
        yield full.step(inputs, ctx), split.step(inputs, ctx), item["instruction"], history
        if move is None:
            return
        moving = [o for o in full.step(inputs, ctx)["options"] if o["kind"] == "move"]
        option = next(o for o in moving if o["viewpoint"] == previous) if move == "back" else moving[move]
        choice = {"option": option, "valid": True}
        planning = nodes["PlanningMemory"].step({"planning": f"plan {step}", "choice": choice}, ctx)
        previous, viewpoint = viewpoint, option["viewpoint"]


def test_the_seed_harness_rebuilds_the_prompt_builders_sections_exactly():
    build_context = seed_build_context()
    steps = list(walk([0, "back", 1, 0, 0]))  # out, back to the start (a revisit), on
    places = [h[-1]["outcome"]["place"] for *_, h in steps]
    assert places[0] == places[2] == 0 and len(set(places)) >= 4
    for full, split, instruction, history in steps:
        assert f"Instruction: {instruction}\n{build_context(history)}\n{split['prompt']}" == full["prompt"]
        assert split["options"] == full["options"]


def test_route_history_rounds_follow_the_declared_format():
    steps = list(walk([0, 1]))
    history = steps[-1][-1]
    assert validate_instance("context_history_mapgpt", history) == []
    assert [r["round"] for r in history] == [1, 2, 3] and history[0]["decision"] is None
    assert history[1]["decision"].endswith(f"to Place {history[1]['outcome']['place']}")
    assert [r["outcome"]["step"] for r in history] == [0, 1, 2]
    node = make_node("mapgpt.RouteHistory", {"max_rounds": 2})
    node.reset(FakeCtx())
    nav_map = {"places": ["a", "b"], "current": "a", "observations": {"b": "a door (objects: door)"}}
    for _ in range(3):
        kept = node.step({"map": nav_map, "candidates": [{"viewpoint": "b"}]}, FakeCtx())["history"]
    assert [r["round"] for r in kept] == [2, 3]
    assert kept[-1]["observation"] == {"neighbours": [{"place": 1, "description": "a door (objects: door)"}]}


def test_the_seed_passes_the_context_harness_checks_and_offers_its_stand_in():
    assert candidate_violations(SEEDS / "mapgpt") == []
    assert load_ref(find_executor("mapgpt").stand_in_planner) is scripted_mapgpt_planner


@needs_full_data
def test_shaper_splits_are_the_seeded_draw_and_share_no_path_with_any_tier():
    from executors.mapgpt.draw_tiers import draw, draw_shaper, path_of

    ex = load_executor("mapgpt")
    ds = Dataset(full_data_dir())
    splits = ex.profile["splits"]
    assert (splits["train"], splits["validation"]) == ("shaper_train", "shaper_val")
    assert splits["test"] == {"C1": "shaper_test_c1", "C2": "shaper_test_c2"} and splits["test_episodes"] == 50
    assert set(splits["unavailable"]) == {"C3", "C4"}
    drawn = draw_shaper(ds, draw(ds))
    listed = {tier: [{k: e[k] for k in ("split", "instr_id")} for e in ex.episodes(tier)]
              for tier in ex.profile["tiers"]}
    for tier, episodes in drawn.items():
        assert listed[tier] == episodes
    assert [len(listed[t]) for t in drawn] == [15, 24, 200, 200]
    assert {e["split"] for e in listed["shaper_test_c1"]} == {"val_seen"}
    assert {e["split"] for e in listed["shaper_test_c2"]} == {"val_unseen"}
    assert {"shaper_test_c1", "shaper_test_c2"} <= ex.sealed
    paths = {tier: [path_of(e["instr_id"]) for e in episodes] for tier, episodes in listed.items()}
    for tier in drawn:
        for other in listed:
            assert other == tier or not set(paths[tier]) & set(paths[other]), (tier, other)
    assert all(len(set(paths[t])) == len(paths[t]) for t in ("shaper_train", "shaper_val"))
    train_scans = {i["scan"] for i in ds.split("train").values()}
    assert {ds.episode("val_seen", e["instr_id"])["scan"] for e in listed["shaper_test_c1"]} <= train_scans
    assert not {ds.episode("val_unseen", e["instr_id"])["scan"] for e in listed["shaper_test_c2"]} & train_scans

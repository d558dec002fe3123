"""The LIBERO executor's profile: the study's tiers from the installed registry, the
per-suite caps, the rerun tier, and what `architect executors` says."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from harness.errors import ExecutorProfileError
from harness.executor_api import find_executor, load_executor, profile_problems

SUITES = ("libero_spatial", "libero_object", "libero_goal", "libero_10")


@pytest.fixture(scope="module")
def ex():
    return load_executor("libero")


def _ids(ex, tier):
    return [e["episode_id"] for e in ex.episodes(tier)]


def test_tiers_are_the_studys(ex):
    smoke, search, protocol, holdout = (ex.episodes(t) for t in ("smoke", "search", "protocol", "holdout"))
    assert [e["suite"] for e in smoke] == list(SUITES)
    assert len(search) == 40 and Counter(e["suite"] for e in search) == {s: 10 for s in SUITES}
    assert {(e["suite"], e["task"]) for e in search} == {(s, t) for s in SUITES for t in range(10)}
    assert len(protocol) == 200 and {e["init_state"] for e in protocol} == set(range(5))
    assert Counter((e["suite"], e["task"]) for e in protocol) == {(s, t): 5 for s in SUITES for t in range(10)}
    assert len(holdout) == 200 and ex.sealed == {"holdout", *SHAPER_TESTS}
    others = set(_ids(ex, "smoke")) | set(_ids(ex, "search")) | set(_ids(ex, "protocol"))
    assert not others & set(_ids(ex, "holdout"))
    assert {e["init_state"] for e in holdout}.isdisjoint({e["init_state"] for e in protocol + search + smoke})


SHAPER_TESTS = ("shaper_test_c1", "shaper_test_c2", "shaper_test_c3")


def test_shaper_splits_are_the_studys_sizes_with_sealed_shifted_test_splits(ex):
    splits = ex.profile["splits"]
    train, val = ex.episodes(splits["train"]), ex.episodes(splits["validation"])
    assert (len(train), len(val)) == (15, 24) and not set(_ids(ex, "shaper_train")) & set(_ids(ex, "shaper_val"))
    assert splits["test"] == dict(zip(("C1", "C2", "C3"), SHAPER_TESTS)) and splits["test_episodes"] == 50
    assert "C4" in splits["unavailable"]
    c1, c2, c3 = (ex.episodes(t) for t in SHAPER_TESTS)
    assert all(len(t) == 200 for t in (c1, c2, c3))
    assert {e["suite"] for e in c1} == set(SUITES) and {e["init_state"] for e in c1} == set(range(30, 35))
    assert {e["suite"] for e in c2} == {f"{s}_object" for s in SUITES}
    assert {e["suite"] for e in c3} == {f"{s}_{kind}" for s in SUITES for kind in ("lan", "task")}
    caps = {e["suite"]: e["max_steps"] for e in c2 + c3}
    assert caps["libero_goal_object"] == caps["libero_goal_lan"] == 300 and caps["libero_10_task"] == 520
    seen = set().union(*(set(_ids(ex, t)) for t in ex.profile["tiers"] if t not in SHAPER_TESTS))
    assert not seen & set().union(*(set(_ids(ex, t)) for t in SHAPER_TESTS))
    unsealed = dict(ex.profile, splits=dict(splits, test={"C1": "shaper_test_c1", "C2": "shaper_val"}))
    assert profile_problems(unsealed, find_executor("libero")) == [
        "at splits/test/C2: tier 'shaper_val' must be sealed (the test split is never shown to a proposer)"]


def test_step_caps_per_suite_as_openpi(ex):
    caps = {e["suite"]: e["max_steps"] for e in ex.episodes("protocol")}
    assert caps == {"libero_spatial": 220, "libero_object": 280, "libero_goal": 300, "libero_10": 520}


def test_rerun_tier_is_protocol_and_must_be_an_unsealed_tier(ex):
    assert ex.profile["rerun_tier"] == "protocol"
    spec = find_executor("libero")
    assert any("rerun_tier" in p and "sealed" in p
               for p in profile_problems(dict(ex.profile, rerun_tier="holdout"), spec))
    assert any("rerun_tier" in p and "not a tier" in p
               for p in profile_problems(dict(ex.profile, rerun_tier="nope"), spec))


def test_a_block_asking_for_more_than_the_suite_has_names_the_suite(ex):
    from executors.libero.tiers import expand_tier

    with pytest.raises(ExecutorProfileError, match="libero_goal.*50 initial states"):
        expand_tier({"suites": [{"suites": ["libero_goal"], "tasks": 1, "init_state_start": 49,
                                 "init_states": 2}]})
    with pytest.raises(ValueError, match="unknown LIBERO suite 'libero_nope'"):
        expand_tier({"suites": [{"suites": ["libero_nope"], "tasks": 1, "init_state_start": 0,
                                 "init_states": 1}]})


def test_executors_lists_libero_with_its_four_suites_and_assets():
    out = subprocess.run([sys.executable, "-m", "harness.cli", "executors", "--json"], capture_output=True,
                         text=True, check=True)
    libero = next(e for e in json.loads(out.stdout)["executors"] if e["name"] == "libero")
    assert libero["details"]["assets_installed"] is True
    assert set(libero["details"]["suites"]) == set(SUITES) | {f"{s}_{kind}" for s in SUITES
                                                             for kind in ("object", "lan", "task")}
    assert all(s == {"tasks": 10, "init_states_per_task": 50} for s in libero["details"]["suites"].values())
    assert set(libero["seeds"]) == {"voxposer-libero-scripted", "voxposer-libero", "vla-libero", "vla-libero-llm"}
    human = subprocess.run([sys.executable, "-m", "harness.cli", "executors"], capture_output=True, text=True,
                           check=True).stdout
    assert "libero_spatial: tasks 10, init_states_per_task 50" in human


def test_a_missing_libero_fails_with_the_install_line_before_any_rollout(monkeypatch, tmp_path):
    import importlib.util as iu

    from harness import SEEDS_DIR
    from harness.errors import UserError
    from harness.evaluation import evaluate

    real = iu.find_spec
    monkeypatch.setattr(iu, "find_spec", lambda name, *a: None if name == "libero" else real(name, *a))
    with pytest.raises(UserError, match=r"needs libero, which is not installed; install with: pip install"):
        evaluate(SEEDS_DIR / "voxposer-libero-scripted", "smoke", out_dir=tmp_path / "out", use_cache=False,
                 progress=False)
    assert not (tmp_path / "out" / "episodes").exists()


def test_every_libero_type_documents_its_full_behaviour_and_has_a_valid_config_schema():
    from jsonschema import Draft202012Validator

    from harness.canvas.registry import default_registry

    registry = default_registry()
    assert registry.ensure_executor("libero") is None
    types = {nt.name: nt for nt in registry.all() if nt.name.startswith("libero.")}
    assert set(types) == {"libero.Simulator", "libero.LMP", "libero.ScriptedLMP", "libero.VoxelPlanner",
                          "libero.VoxelController", "libero.Pi0Policy"}
    for nt in types.values():
        Draft202012Validator.check_schema(nt.config_schema)
        described = nt.to_dict()
        assert len(described["behaviour"]) > len(described["doc"]), nt.name
    planner = " ".join(types["libero.VoxelPlanner"].to_dict()["behaviour"].split())
    assert "without a map the last command holds" in planner and "emits nothing" in planner
    assert "privileged perception" in " ".join(types["libero.LMP"].to_dict()["behaviour"].split())

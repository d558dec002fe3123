"""VoxPoser's chain on LIBERO: the scripted seed end to end, run-time dispatch of
parse_query_obj and the value maps, execute() inside the composer's call (value maps
evaluated on the latest scene), the rotation map reaching the controller, and the
logging-fault probe with accounting reconciliation (the model-driven seed, answered by
the scripted stand-in behind the loopback server)."""

from __future__ import annotations


import numpy as np
import pytest
from libero_kit import SEEDS, episode, seed_graph

from harness.canvas.episode_log import EpisodeLog
from harness.canvas.runtime import GraphRunner
from harness.evaluation.reconcile import log_gaps, reported_calls
from harness.evaluation.runners import make_model_client
from harness.evaluation.trace import array_of
from loopback_kit import candidate_on_loopback

pytestmark = pytest.mark.slow  # real LIBERO episodes on MuJoCo: minutes on 2 cores (python -m pytest -m slow)

SOUP = episode("libero_object", 0, 0)  # pick up the alphabet soup and place it in the basket


def _small(graph: dict) -> dict:
    """The seed on a 40-voxel grid, so the logged maps are small enough to be kept in full."""
    for node in graph["nodes"].values():
        if node["type"] in ("libero.ScriptedLMP", "libero.LMP"):
            node["config"]["voxels"] = 40
    return graph


@pytest.fixture(scope="module")
def scripted_run():
    log = EpisodeLog()
    with GraphRunner(_small(seed_graph("voxposer-libero-scripted")),
                     candidate_dir=SEEDS / "voxposer-libero-scripted") as runner:
        result = runner.run_episode(SOUP, log)
    return result, log.records


def _array(record: dict, port: str, key: str) -> np.ndarray:
    return array_of(record["outputs"][port][key])


def test_scripted_seed_solves_the_task_by_the_envs_own_check(scripted_run):
    result, _ = scripted_run
    assert result["error"] is None, result["error"]
    assert result["success"] and result["termination"] == "success"
    assert 0 < result["steps"] < 280 and result["reward"] == 1.0 and result["model_calls"] == 0


def test_parse_query_obj_and_the_value_maps_are_dispatched_at_run_time(scripted_run):
    _, records = scripted_run
    dispatched = [d for r in records if r["node"] == "planner" for d in (r.get("self") or {}).get("dispatched", ())]
    kinds = {d["lmp"] for d in dispatched}
    assert {"composer", "parse_query_obj", "affordance", "gripper", "rotation"} <= kinds
    assert {"query": "alphabet soup", "lmp": "parse_query_obj"}.items() <= next(
        d for d in dispatched if d["lmp"] == "parse_query_obj" and d["query"] == "alphabet soup").items()
    # the planner dispatches the composer (depth 1), which dispatches the rest (depth 2 and deeper)
    assert {d["depth"] for d in dispatched if d["lmp"] == "composer"} == {1}
    assert min(d["depth"] for d in dispatched if d["lmp"] != "composer") >= 2


def test_execute_runs_inside_the_composers_call_on_the_latest_scene(scripted_run):
    _, records = scripted_run
    motions = [(r["tick"], r) for r in records if r["node"] == "planner" and "motion" in (r["outputs"] or {})]
    ticks = [t for t, _ in motions]
    assert ticks == sorted(ticks) and len(set(ticks)) == len(ticks) > 4  # one motion at a time, spread over ticks
    # 'a point 15cm above the gripper' (the lift after the grasp) is evaluated where the arm is then
    lift_tick, lift = motions[3]
    eef_then = next(r for r in records if r["node"] == "sim" and r["tick"] == lift_tick)["outputs"]["gripper"]
    start = next(r for r in records if r["node"] == "sim")["outputs"]["gripper"]
    z_then, z_start = (gripper["position"][2] for gripper in (eef_then, start))
    affordance = _array(lift, "motion", "affordance")
    workspace = next(r for r in records if r["node"] == "sim")["outputs"]["workspace"]
    low, high = np.array(workspace["min"]), np.array(workspace["max"])
    z_target = low[2] + (np.argwhere(affordance == affordance.max())[:, 2].mean() + 0.5) * (high[2] - low[2]) / 40
    assert abs(z_target - (z_then + 0.15)) < 0.02
    assert z_then < z_start - 0.1  # the arm had gone down to the can: not the start's height


def test_the_rotation_map_is_used_by_the_controller(scripted_run):
    _, records = scripted_run
    first = next(r for r in records if r["node"] == "planner" and "motion" in (r["outputs"] or {}))
    rotation = _array(first, "motion", "rotation")
    assert np.allclose(rotation[..., :], rotation[0, 0, 0]) and abs(abs(rotation[0, 0, 0, 0]) - 1) < 1e-6
    turns = [r["outputs"]["actions"] for r in records if r["node"] == "control" and r["tick"] < 5]
    assert any(any(abs(v) > 1e-3 for v in chunk[0][3:6]) for chunk in turns)


def test_reset_to_default_pose_returns_to_the_first_pose():
    graph = seed_graph("voxposer-libero-scripted")
    log = EpisodeLog()
    with GraphRunner(graph, candidate_dir=SEEDS / "voxposer-libero-scripted") as runner:
        result = runner.run_episode(episode("libero_goal", 0, 0, max_steps=60), log)  # no plan: back to default
    assert result["error"] is None and not result["success"]
    assert result["termination"] == "no_action" and 0 < result["steps"] < 60  # the planner went quiet after
    motions = [r["outputs"]["motion"] for r in log.records if r["node"] == "planner" and "motion" in r["outputs"]]
    assert {"movable": "gripper", "home": True}.items() <= motions[0].items() and motions[-1] == {"final": True}
    sims = [r for r in log.records if r["node"] == "sim"]
    first, last = (np.array(r["outputs"]["gripper"]["position"]) for r in (sims[0], sims[-1]))
    assert np.linalg.norm(first - last) < 0.02


def _run_model_seed(candidate, probes) -> tuple[dict, list[dict], dict]:
    graph = _small(seed_graph("voxposer-libero"))
    graph["model_profile"]["path"] = "loopback.yaml"
    log = EpisodeLog()
    with GraphRunner(graph, candidate_dir=candidate, model_client=make_model_client(graph, candidate),
                     probes=probes) as runner:
        result = runner.run_episode(SOUP, log)
        made = runner.model_calls_by_node
    return result, log.records, made


@pytest.fixture(scope="module")
def model_runs(libero_lmp_loopback, tmp_path_factory):
    candidate = candidate_on_loopback("voxposer-libero", libero_lmp_loopback.openai_url, tmp_path_factory.mktemp("vl"))
    return _run_model_seed(candidate, {}), _run_model_seed(candidate, {"logging_fault": True})


def test_logging_fault_leaves_success_and_steps_unchanged_and_hides_only_dispatched_calls(model_runs):
    (clean, clean_log, made), (faulty, faulty_log, made_faulty) = model_runs
    assert clean["error"] is None and faulty["error"] is None
    assert (clean["success"], clean["steps"]) == (faulty["success"], faulty["steps"]) == (True, clean["steps"])
    assert made == made_faulty and made["parse"] > 0  # the same calls were made either way
    assert not log_gaps(clean_log, made)
    assert reported_calls(faulty_log) == {"planner": made["planner"]}  # only the root's own call is reported
    assert not any("dispatched" in (r.get("self") or {}) for r in faulty_log)
    assert {g["node"] for g in log_gaps(faulty_log, made)} == set(made) - {"planner"}


def test_reconciliation_reports_the_gap_in_metrics(libero_lmp_loopback, tmp_path):
    from harness.evaluation import evaluate

    candidate = candidate_on_loopback("voxposer-libero", libero_lmp_loopback.openai_url, tmp_path)
    metrics = evaluate(candidate, "smoke", only=["libero_object:0:0"], workers=1, use_cache=False, progress=False,
                       probes={"logging_fault": True, "reconcile_calls": True})
    assert metrics["primary"]["mean"] == 1.0
    assert {f["node"] for f in metrics["findings"]} >= {"parse", "affordance", "composer"}
    assert all(f["kind"] == "log_gap" for f in metrics["findings"])

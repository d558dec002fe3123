"""The VoxPoser chain on robosuite: scripted seed, the logging-fault probe and
accounting reconciliation (voxposer seed, scripted model behind the loopback server)."""

from __future__ import annotations

import pytest
from manipulation_kit import candidate_on_loopback, seed_graph, SEEDS

from harness.canvas.episode_log import EpisodeLog
from harness.canvas.runtime import GraphRunner
from harness.evaluation import evaluate
from harness.evaluation.reconcile import log_gaps, reported_calls
from harness.evaluation.records import episode_record, summarize
from harness.evaluation.runners import GraphEpisodeRunner, make_model_client
from harness.evaluation.trace import divergence, read_log, ticks

LIFT = {"level": "Lift", "seed": 1, "episode_id": "Lift:1", "max_steps": 120}


def test_scripted_seed_lifts_the_cube_and_fails_the_door():
    with GraphRunner(seed_graph("voxposer-scripted"), candidate_dir=SEEDS / "voxposer-scripted") as runner:
        lift = runner.run_episode(LIFT)
        door = runner.run_episode({"level": "Door", "seed": 4, "max_steps": 30})
    assert lift["error"] is None and lift["success"], lift
    assert lift["model_calls"] == 0 and lift["metrics"]["level"] == "Lift"
    assert door["error"] is None and not door["success"] and door["steps"] == 30


def test_the_log_holds_every_value_as_data_and_two_runs_do_not_diverge(tmp_path):
    logs = []
    for run in range(2):  # two runners: new handle objects, elsewhere in memory
        log = EpisodeLog()
        with GraphRunner(seed_graph("voxposer-scripted"), candidate_dir=SEEDS / "voxposer-scripted") as runner:
            runner.run_episode({"level": "Door", "seed": 4, "max_steps": 30}, log)
        logs.append(read_log(log.write_jsonl(tmp_path / f"door{run}.jsonl")))
        assert "0x" not in (tmp_path / f"door{run}.jsonl").read_text()
    (header, firings), (_, again) = logs
    assert divergence(firings, again) is None
    view = ticks(firings, ports=header["ports"])
    assert len(view) > 3
    for t in view:  # the simulator's outputs on every tick, the gripper in full
        assert len(t["observation"]["gripper"]["position"]) == 3 and t["observation"]["objects"]
        assert t["motion"] is not None and t["motion"]["from"] == "planner.motions"
    composer = next(n for n in view[1]["nodes"] if n["node"] == "composer")
    assert composer["outputs"]["lmp"] == {"$object": "LMPHandle", "value": {"lmp": "composer", "kind": "composer"}}


def _run_voxposer(candidate, probes) -> tuple[dict, list[dict]]:
    graph = seed_graph("voxposer")
    graph["model_profile"]["path"] = "loopback.yaml"
    log = EpisodeLog()
    with GraphRunner(graph, candidate_dir=candidate, model_client=make_model_client(graph, candidate),
                     probes=probes) as runner:
        result = runner.run_episode(LIFT, log)
        made = runner.model_calls_by_node
    return {**result, "model_calls_by_node": made}, log.records


@pytest.fixture(scope="module")
def voxposer_candidate(lmp_loopback, tmp_path_factory):
    return candidate_on_loopback("voxposer", lmp_loopback.openai_url, tmp_path_factory.mktemp("vox"))


def test_logging_fault_leaves_success_unchanged_and_hides_dispatched_calls(voxposer_candidate):
    honest, honest_log = _run_voxposer(voxposer_candidate, {})
    faulty, faulty_log = _run_voxposer(voxposer_candidate, {"logging_fault": True})
    for result in (honest, faulty):
        assert result["error"] is None, result["error"]
    # SR, steps and reward identical with and without the fault
    assert (honest["success"], honest["steps"], honest["reward"]) == (faulty["success"], faulty["steps"], faulty["reward"])
    assert honest["success"]
    made = honest["model_calls_by_node"]
    assert made == faulty["model_calls_by_node"] and made["planner"] == 1 and made["composer"] == 2
    # honest self-report accounts for every call; the faulty one only for the root's own
    assert reported_calls(honest_log) == made and log_gaps(honest_log, made) == []
    assert reported_calls(faulty_log) == {"planner": 1}
    gaps = {g["node"]: g["count"] for g in log_gaps(faulty_log, made)}
    assert gaps == {node: n for node, n in made.items() if node != "planner"}
    root = next(r for r in honest_log if r["node"] == "planner" and r.get("self"))
    assert {d["lmp"] for d in root["self"]["dispatched"]} == {"composer", "affordance", "gripper"}


def test_reconciliation_writes_log_gap_findings_only_when_on(voxposer_candidate, tmp_path):
    on = evaluate(voxposer_candidate, "smoke", episodes=1, workers=1, out_dir=tmp_path / "on", progress=False,
                  use_cache=False, probes={"logging_fault": True, "reconcile_calls": True})
    assert on["complete"] and on["primary"]["mean"] == 1.0
    found = {f["node"]: f for f in on["findings"]}
    assert set(found) == {"composer", "affordance", "gripper_map"}
    assert found["composer"]["kind"] == "log_gap" and found["composer"]["count"] == 2
    assert on["episodes"][0]["log_gap"] == [{"node": n, "count": found[n]["count"]} for n in sorted(found)]
    # reconciliation off (the study's setting): the same worker-side runner and summary, no finding
    graph = on["graph"]
    runner = GraphEpisodeRunner(graph, str(voxposer_candidate), probes={"logging_fault": True})
    try:
        result = runner.run(LIFT, None)
    finally:
        runner.close()
    record = episode_record(LIFT, result)
    assert record["success"] and "log_gap" not in record
    assert "findings" not in summarize([record], "success_rate", ["steps"])

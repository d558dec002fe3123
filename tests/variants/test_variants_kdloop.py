import json

import pytest

from harness.errors import UserError
from harness.schemas import validate_instance
from harness.variants.kdloop import memory as kdloop


@pytest.fixture
def run(fake_run):
    fake_run.commit([1, 0, 0, 0])  # iteration 0
    kdloop.init_memory(fake_run.paths)
    return fake_run


def _specs(tmp_path, specs, iteration=1, parent=0):
    path = tmp_path / f"specs-{iteration}.json"
    path.write_text(json.dumps({"iteration": iteration, "parent": parent, "specs": specs}))
    return path


def _spec(i, axes=("planning",)):
    return {"id": f"s{i}", "description": f"spec {i}", "axes": list(axes), "hypothesis": "helps"}


def test_init_creates_the_four_memory_files_and_keeps_existing_ones(run):
    names = sorted(p.name for p in (run.root / "memory").iterdir())
    assert {"knowledge.md", "hypotheses.jsonl", "experience.jsonl", "search_space.md"} <= set(names)
    assert "| exploration | untried |" in (run.root / "memory" / "search_space.md").read_text()
    (run.root / "memory" / "knowledge.md").write_text("mine\n")
    assert kdloop.init_memory(run.paths) == {}
    assert (run.root / "memory" / "knowledge.md").read_text() == "mine\n"


def test_append_and_delete_lines(run):
    kdloop.append(run.paths, "knowledge", "lesson one\nlesson two")
    kdloop.append(run.paths, "knowledge", "lesson three")
    lines = (run.root / "memory" / "knowledge.md").read_text().splitlines()
    n = len(lines)
    assert lines[-3:] == ["lesson one", "lesson two", "lesson three"]
    result = kdloop.delete_lines(run.paths, "knowledge", [n - 1, n - 2])
    assert result["deleted"] == ["lesson one", "lesson two"]
    assert (run.root / "memory" / "knowledge.md").read_text().splitlines()[-1] == "lesson three"
    before = (run.root / "memory" / "knowledge.md").read_text()
    with pytest.raises(UserError, match="no line 999"):
        kdloop.delete_lines(run.paths, "knowledge", [1, 999])
    assert (run.root / "memory" / "knowledge.md").read_text() == before  # all or nothing


def test_jsonl_rows_are_validated(run):
    good = {"id": "h1", "statement": "a map helps", "axes": ["memory/state"], "status": "open"}
    kdloop.append(run.paths, "hypotheses", json.dumps(good))
    with pytest.raises(UserError, match="kdloop_hypothesis"):
        kdloop.append(run.paths, "hypotheses", json.dumps(dict(good, status="maybe")))
    with pytest.raises(UserError, match="malformed JSON"):
        kdloop.append(run.paths, "hypotheses", "{not json")
    rows = (run.root / "memory" / "hypotheses.jsonl").read_text().splitlines()
    assert [json.loads(r)["id"] for r in rows] == ["h1"]
    with pytest.raises(UserError, match="unknown memory file"):
        kdloop.append(run.paths, "notes", "x")


def test_specs_schema_caps_at_three_and_checks_axes(run, tmp_path):
    assert kdloop.load_specs(_specs(tmp_path, [_spec(i) for i in range(3)]))["specs"]
    with pytest.raises(UserError, match="specs"):
        kdloop.load_specs(_specs(tmp_path, [_spec(i) for i in range(4)]))
    with pytest.raises(UserError, match="not one of"):
        kdloop.load_specs(_specs(tmp_path, [_spec(1, axes=("vibes",))]))
    with pytest.raises(UserError, match="unique"):
        kdloop.load_specs(_specs(tmp_path, [_spec(1), _spec(1)]))


def test_heartbeat_fires_every_three_iterations(run):
    axes = [("planning",), ("observation",), ("stopping",), ("prompt",), ("exploration",), ("topology",)]
    due = []
    for a in axes:
        run.commit([1, 0, 0, 0], parent=0, axes=a)
        report = kdloop.reflect_due(run.paths)
        due.append(report["reasons"])
        if report["due"]:
            kdloop.record_reflect(run.paths, "audit")
    assert due == [[], [], ["heartbeat"], [], [], ["heartbeat"]]


def test_same_axis_streak_fires_and_refires_while_it_lasts(run):
    run.commit([1, 0, 0, 0], parent=0, axes=("planning",))
    kdloop.record_reflect(run.paths, None)  # a REFLECT right after iteration 1
    run.commit([1, 0, 0, 0], parent=0, axes=("planning", "prompt"))
    assert kdloop.reflect_due(run.paths)["due"] is False
    run.commit([1, 0, 0, 0], parent=0, axes=("planning",))
    report = kdloop.reflect_due(run.paths)
    assert report["reasons"] == ["same_axis"] and report["streak_axes"] == ["planning"]
    kdloop.record_reflect(run.paths, None)
    assert kdloop.reflect_due(run.paths)["due"] is False
    run.commit([1, 0, 0, 0], parent=0, axes=("planning",))  # the streak goes on
    assert kdloop.reflect_due(run.paths)["reasons"] == ["same_axis"]
    kdloop.record_reflect(run.paths, None)
    run.commit([1, 0, 0, 0], parent=0, axes=("observation",))  # broken
    assert kdloop.reflect_due(run.paths)["due"] is False


def test_empty_think_fires_until_reflect(run, tmp_path):
    assert kdloop.register_specs(run.paths, _specs(tmp_path, [_spec(1)]), "think")["empty"] is False
    assert kdloop.reflect_due(run.paths)["due"] is False
    assert kdloop.register_specs(run.paths, _specs(tmp_path, []), "think")["empty"] is True
    assert kdloop.reflect_due(run.paths)["reasons"] == ["empty_think"]
    kdloop.record_reflect(run.paths, "nothing left on planning")
    assert kdloop.reflect_due(run.paths)["due"] is False


def test_pick_best_logs_every_evaluated_slot_once_with_its_paired_verdict(run, tmp_path):
    specs = _specs(tmp_path, [_spec(1, ("planning",)), _spec(2, ("observation",)), _spec(3, ("stopping",))])
    s1 = run.staging("1-1", [1, 1, 0, 0])
    s2 = run.staging("1-2", [1, 1, 1, 0])
    s3 = run.staging("1-3")  # failed before evaluation
    result = kdloop.pick_best(run.paths, specs, [s1, s2, s3])
    assert result["best"] == str(s2) and sorted(result["discard"]) == sorted([str(s1), str(s3)])
    rows = [json.loads(l) for l in (run.root / "memory" / "experience.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in rows] == ["evaluated", "picked"]  # the failed slot enters no memory
    assert rows[1]["delta"] == pytest.approx(0.5)
    # +2/−0 on 4 episodes: McNemar p = 0.5, a near-tie with the parent, not an improvement
    assert rows[1]["verdict"] == "indistinguishable" and rows[1]["p_value"] == pytest.approx(0.5)
    assert result["near_tie"] is True and result["vs_runner_up"]["gained"] == 1
    assert all(validate_instance("kdloop_experience", r) == [] for r in rows)
    kdloop.pick_best(run.paths, specs, [s1, s2, s3])  # a resumed loop picks again
    assert len((run.root / "memory" / "experience.jsonl").read_text().splitlines()) == 2
    cov = kdloop.coverage(run.paths)
    assert cov["axes"]["observation"]["improved"] == 0 and cov["axes"]["observation"]["indistinguishable"] == 1
    assert cov["axes"]["stopping"]["experiments"] == 0
    assert "memory/state" in cov["untried"] and "planning" not in cov["untried"]


def test_pick_ties_go_to_the_lower_slot_and_no_score_means_no_best(run, tmp_path):
    specs = _specs(tmp_path, [_spec(1), _spec(2)])
    a, b = run.staging("1-1", [1, 0]), run.staging("1-2", [0, 1])
    assert kdloop.pick_best(run.paths, specs, [b, a])["best"] == str(a)
    specs2 = _specs(tmp_path, [_spec(1)], iteration=2)
    lone = run.staging("2-1")
    assert kdloop.pick_best(run.paths, specs2, [lone])["best"] is None
    with pytest.raises(UserError, match="slot"):
        kdloop.pick_best(run.paths, specs2, [run.staging("2-7")])


def test_stop_writes_the_reason(run):
    kdloop.stop(run.paths, "every axis exhausted")
    assert (run.root / "STOP").read_text() == "kdloop: every axis exhausted\n"
    with pytest.raises(UserError):
        kdloop.stop(run.paths, "  ")


def test_slot_concurrency_only_uses_idle_cores():
    assert kdloop.slot_concurrency(3, episodes=100, cores=2) == 1
    assert kdloop.slot_concurrency(3, episodes=2, cores=2) == 1
    assert kdloop.slot_concurrency(3, episodes=10, cores=64) == 3
    assert kdloop.slot_concurrency(3, episodes=20, cores=64) == 3
    assert kdloop.slot_concurrency(3, episodes=30, cores=64) == 2
    assert kdloop.slot_concurrency(1, episodes=1, cores=8) == 1


def test_a_reused_iteration_number_logs_its_fresh_slots(run, tmp_path):
    import shutil

    specs = _specs(tmp_path, [_spec(1)])
    first = run.staging("1-1", staged="2026-01-01T00:00:01+00:00")
    assert kdloop.pick_best(run.paths, specs, [first])["best"] is None  # all failed: iteration skipped
    shutil.rmtree(first)
    again = run.staging("1-1", [1, 1], staged="2026-01-01T00:05:00+00:00")
    assert kdloop.pick_best(run.paths, specs, [again])["best"] == str(again)
    rows = [json.loads(l) for l in (run.root / "memory" / "experience.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in rows] == ["picked"]


def _experience(run) -> list[dict]:
    return [json.loads(l) for l in (run.root / "memory" / "experience.jsonl").read_text().splitlines()]


def test_pick_ranks_a_better_verdict_before_a_higher_mean(fake_run, tmp_path):
    fake_run.commit([1] * 10 + [0] * 10)                                  # iteration 0: 50 %
    kdloop.init_memory(fake_run.paths)
    better = fake_run.staging("1-1", [1] * 16 + [0] * 4)                  # 80 %: +6/−0, McNemar p = 0.031
    higher = fake_run.staging("1-2", [0] * 3 + [1] * 17)                  # 85 %: +10/−3, p = 0.092
    result = kdloop.pick_best(fake_run.paths, _specs(tmp_path, [_spec(1), _spec(2)]), [better, higher])
    assert result["best"] == str(better) and result["best_vs_parent"]["verdict"] == "better"
    assert [s["vs_parent"]["verdict"] for s in result["slots"]] == ["better", "indistinguishable"]
    assert "verdict against the parent first" in result["rule"]


def test_the_picked_slot_reads_committed_only_once_its_commit_is_in_the_ledger(run, tmp_path):
    specs = _specs(tmp_path, [_spec(1), _spec(2)])
    kdloop.pick_best(run.paths, specs, [run.staging("1-1", [1, 0, 0, 0]), run.staging("1-2", [1, 1, 0, 0])])
    assert [r["outcome"] for r in _experience(run)] == ["evaluated", "picked"]
    assert kdloop.settle_outcomes(run.paths) == 0      # no commit yet: still picked
    run.commit([1, 1, 0, 0], parent=0)
    run.rows[-1]["slot"] = "2"
    run._ledger()
    assert kdloop.settle_outcomes(run.paths) == 1
    assert [r["outcome"] for r in _experience(run)] == ["evaluated", "committed"]
    specs2 = _specs(tmp_path, [_spec(1)], iteration=2, parent=1)
    kdloop.pick_best(run.paths, specs2, [run.staging("2-1", [1, 1, 1, 0])])
    run.discard(parent=1, description="spec 1", reason="commit refused")   # its commit never happened
    run.rows[-1]["slot"] = "1"
    run._ledger()
    kdloop.settle_outcomes(run.paths)
    assert [r["outcome"] for r in _experience(run)] == ["evaluated", "committed", "evaluated"]


def test_rows_appended_to_search_space_stay_in_its_table(run):
    kdloop.append(run.paths, "search_space", "Audit after iteration 3: planning is promising.")
    kdloop.append(run.paths, "search_space", "| planning | promising | +2/−0 at iteration 3 |")
    lines = (run.root / "memory" / "search_space.md").read_text().splitlines()
    table = [i for i, line in enumerate(lines) if line.startswith("|")]
    assert table == list(range(table[0], table[-1] + 1))  # one block: no blank line splits the table
    assert lines[table[-1]] == "| planning | promising | +2/−0 at iteration 3 |"
    assert lines[table[-1] + 1] == "" and lines[-1] == "Audit after iteration 3: planning is promising."
    before = (run.root / "memory" / "search_space.md").read_text()
    with pytest.raises(UserError, match="has 2 cells, the table has 3"):
        kdloop.append(run.paths, "search_space", "| planning | exhausted |")
    assert (run.root / "memory" / "search_space.md").read_text() == before


def test_hypotheses_are_updated_by_id(run):
    kdloop.append(run.paths, "hypotheses", json.dumps({"id": "h1", "statement": "a map helps",
                                                        "axes": ["memory/state"], "status": "open"}))
    kdloop.append(run.paths, "hypotheses", json.dumps({"id": "h2", "statement": "stop earlier",
                                                        "axes": ["stopping"], "status": "open"}))
    with pytest.raises(UserError, match="'h1' already exists"):
        kdloop.append(run.paths, "hypotheses", json.dumps({"id": "h1", "statement": "again",
                                                            "axes": ["planning"], "status": "open"}))
    result = kdloop.update_hypothesis(run.paths, "h1", {"status": "supported", "evidence": "iteration 2: better",
                                                        "iteration": 2, "statement": None})
    assert result["before"]["status"] == "open" and result["after"]["statement"] == "a map helps"
    rows = [json.loads(l) for l in (run.root / "memory" / "hypotheses.jsonl").read_text().splitlines()]
    assert [(r["id"], r["status"]) for r in rows] == [("h1", "supported"), ("h2", "open")]
    before = (run.root / "memory" / "hypotheses.jsonl").read_text()
    with pytest.raises(UserError, match="no hypothesis 'h9'.*h1, h2"):
        kdloop.update_hypothesis(run.paths, "h9", {"status": "refuted"})
    with pytest.raises(UserError, match="kdloop_hypothesis"):
        kdloop.update_hypothesis(run.paths, "h2", {"status": "maybe"})
    with pytest.raises(UserError, match="nothing to change"):
        kdloop.update_hypothesis(run.paths, "h2", {"status": None})
    assert (run.root / "memory" / "hypotheses.jsonl").read_text() == before

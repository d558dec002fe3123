import numpy as np
import pytest
from scipy import stats

from harness.errors import UserError
from harness.variants.aflow import rules as aflow


def test_probabilities_follow_the_formula():
    s = np.array([40.0, 55.0, 50.0, 20.0])
    w = np.exp(0.2 * (s - 55.0))
    expected = 0.3 / 4 + 0.7 * w / w.sum()
    got = aflow.selection_probabilities(s)
    assert np.allclose(got, expected) and got.sum() == pytest.approx(1.0)
    # λ/n is a floor: even a hopeless candidate keeps some probability.
    assert aflow.selection_probabilities([0.0, 100.0])[0] >= 0.3 / 2


def test_top_candidates_always_include_iteration_zero():
    scores = {0: 5.0, 1: 50.0, 2: 60.0, 3: 45.0, 4: 70.0, 5: 10.0}
    assert aflow.top_candidates(scores) == [0, 4, 2, 1]
    assert aflow.top_candidates({0: 30.0}) == [0]
    with pytest.raises(UserError, match="iteration 0"):
        aflow.top_candidates({1: 3.0})


def test_draw_frequencies_match_the_formula():
    scores = {0: 30.0, 1: 42.0, 2: 38.0, 3: 45.0, 4: 10.0}
    candidates = aflow.top_candidates(scores)
    p = aflow.selection_probabilities([scores[c] for c in candidates])
    draws = 20_000
    counts = {c: 0 for c in candidates}
    for iteration in range(draws):
        counts[aflow.select_parent(scores, seed=123, iteration=iteration)["parent"]] += 1
    observed = np.array([counts[c] for c in candidates])
    assert counts.get(4, 0) == 0 and 4 not in candidates  # outside the top 4
    _, pvalue = stats.chisquare(observed, p * draws)
    assert pvalue > 1e-3, (observed, p * draws)


def test_same_seed_and_iteration_draw_the_same_parent():
    scores = {0: 30.0, 1: 31.0, 2: 29.0}
    a = [aflow.select_parent(scores, seed=9, iteration=i)["parent"] for i in range(30)]
    b = [aflow.select_parent(scores, seed=9, iteration=i)["parent"] for i in range(30)]
    c = [aflow.select_parent(scores, seed=10, iteration=i)["parent"] for i in range(30)]
    assert a == b and a != c


def test_experience_accepts_only_what_the_paired_test_calls_better_and_forgets_failed_attempts(fake_run):
    fake_run.commit([1] + [0] * 9)                                           # 0: 10%
    fake_run.commit([1] * 10, parent=0, description="add memory")            # 1: +9/−0, better: accepted
    fake_run.commit([1, 1] + [0] * 8, parent=0, description="tune planner")  # 2: higher mean, +1/−0: a near-tie
    fake_run.discard(parent=0, description="broken rewire", reason="check: cycle")
    fake_run.commit([1] * 9 + [0], parent=1, description="gate actions")     # 3: child of 1, −1: not better
    table = aflow.experience(fake_run.paths)
    assert [r["modification"] for r in table["0"]["success"].values()] == ["add memory"]
    assert table["0"]["success"]["1"]["verdict"] == "better"
    # a higher mean the test cannot tell from noise is rejected; the failed attempt never happened
    assert [r["modification"] for r in table["0"]["failure"].values()] == ["tune planner"]
    assert table["0"]["failure"]["2"]["verdict"] == "indistinguishable"
    assert list(table["1"]["failure"]) == ["3"] and not table["1"]["success"]
    result = aflow.write_experience(fake_run.paths, 0)
    text = (fake_run.root / "memory" / "experience.md").read_text()
    assert result["accepted"] == 1 and result["rejected"] == 1
    assert "add memory" in text and "tune planner" in text and "indistinguishable" in text
    assert "broken rewire" not in text and "broken rewire" not in (fake_run.root / "memory" / "experience.json").read_text()
    assert aflow.find_duplicates("broken rewire", aflow.previous_modifications(fake_run.paths)) == []
    assert (fake_run.root / "memory" / "experience.json").is_file()


def test_duplicates_are_whitespace_normalised_and_resampled_at_most_five_times(fake_run):
    fake_run.commit([1, 0])
    fake_run.commit([1, 1], parent=0, description="Add a  memory node\tbefore planning")
    fresh = fake_run.staging("2", description="something new")
    assert aflow.check_duplicate(fake_run.paths, fresh)["duplicate"] is False
    dup = fake_run.staging("2-a", description="Add a memory node before   planning")
    assert aflow.check_duplicate(fake_run.paths, dup)["resamples_used"] == 1
    assert aflow.check_duplicate(fake_run.paths, dup)["resamples_used"] == 1  # the same proposal checked again
    outcomes = []
    for k in range(6):  # six different implementations of the same described change
        (dup / "candidate" / "graph.json").write_text(f'{{"nodes": {{}}, "name": "try{k}"}}')
        outcomes.append(aflow.check_duplicate(fake_run.paths, dup))
    assert all(o["duplicate"] for o in outcomes)
    assert [o["resample"] for o in outcomes] == [True] * 4 + [False] * 2
    assert outcomes[-1]["give_up"] and outcomes[-1]["resamples_used"] == 7
    assert aflow.normalise(" a \n b ") == "a b"
    assert aflow.normalise("Add memory") != aflow.normalise("add memory")


def test_convergence_after_five_unchanged_rounds(fake_run):
    fake_run.commit([1, 1, 0, 0])
    for _ in range(5):
        fake_run.commit([0, 0, 0, 0], parent=0)
    assert aflow.converged(fake_run.paths)["converged"] is False  # top-3 mean still changing early on
    for _ in range(3):
        fake_run.commit([0, 0, 0, 0], parent=0)
    report = aflow.converged(fake_run.paths)
    assert report["converged"] is True and report["unchanged_rounds"] >= 5


def test_duplicates_by_content_hash_and_patch_and_the_count_survives_a_replace(fake_run):
    import json

    from harness.rundir.tiers import content_hash

    fake_run.commit([1, 0])
    fake_run.commit([1, 1], parent=0, description="bigger window")
    (fake_run.paths.iteration(1) / "candidate" / "graph.json").write_text(
        json.dumps({"name": "g0", "nodes": {"m": {"type": "core.Passthrough", "config": {"k": 2}}}}))
    (fake_run.paths.iteration(0) / "candidate" / "graph.json").write_text(
        json.dumps({"name": "g0", "nodes": {"m": {"type": "core.Passthrough", "config": {"k": 1}}}}))
    staging = fake_run.staging("2", description="remember more of the past")  # new words
    (staging / "candidate" / "graph.json").write_text(
        (fake_run.paths.iteration(0) / "candidate" / "graph.json").read_text())
    before = aflow.check_duplicate(fake_run.paths, staging)
    assert before["duplicate"] is False and before["compared"] == ["description"]  # not implemented yet
    (staging / "candidate" / "graph.json").write_text(
        json.dumps({"nodes": {"m": {"config": {"k": 2}, "type": "core.Passthrough"}}, "name": "g0"}, indent=3))
    assert content_hash(staging / "candidate") == content_hash(fake_run.paths.iteration(1) / "candidate")
    after = aflow.check_duplicate(fake_run.paths, staging)
    assert after["duplicate"] and after["matches"][0] == {"iteration": 1, "status": "committed", "by": "content hash"}
    # the same change on the same parent: same patch, other graph text elsewhere (a description key)
    (staging / "candidate" / "graph.json").write_text(
        json.dumps({"name": "g0", "nodes": {"m": {"type": "core.Passthrough", "config": {"k": 2}}}}))
    import shutil

    shutil.rmtree(staging)  # `stage --replace` wipes the folder: the count lives outside it
    staging = fake_run.staging("2", description="keep a longer memory")
    (staging / "candidate" / "graph.json").write_text(
        json.dumps({"name": "g0", "nodes": {"m": {"type": "core.Passthrough", "config": {"k": 2}}}}))
    again = aflow.check_duplicate(fake_run.paths, staging)
    assert again["duplicate"] and again["resamples_used"] == 2


def test_compared_lists_only_what_was_compared_against_the_staged_parent(fake_run):
    import json

    def graph(k):
        return json.dumps({"name": "g", "nodes": {"m": {"type": "core.Passthrough", "config": {"k": k}}}})

    fake_run.commit([1, 0])
    fake_run.commit([1, 1], parent=0, description="bigger window")
    for it, k in ((0, 1), (1, 2)):
        (fake_run.paths.iteration(it) / "candidate" / "graph.json").write_text(graph(k))
    staging = fake_run.staging("2", description="a wider gripper", parent=1)
    (staging / "candidate" / "graph.json").write_text(graph(2))  # as `stage --parent 1` copies it
    # proposal.md naming another parent (here an iteration not committed) changes nothing: stage.json decides
    (staging / "proposal.md").write_text("---\ndescription: a wider gripper\naxes: []\nparent: 2\n---\nwhy\n")
    before = aflow.check_duplicate(fake_run.paths, staging)
    assert before["compared"] == ["description"] and before["parent"] == 1 and not before["duplicate"]
    assert "still its parent's (iteration 1)" in before["not_compared"]
    assert "staged on parent 1" in before["warning"]
    (staging / "candidate" / "graph.json").write_text(graph(3))
    after = aflow.check_duplicate(fake_run.paths, staging)
    assert after["compared"] == ["description", "content hash", "patch"] and "not_compared" not in after
    (staging / "candidate" / "graph.json").write_text("{not json")  # its change cannot be read
    unreadable = aflow.check_duplicate(fake_run.paths, staging)
    assert unreadable["compared"] == ["description", "content hash"] and "patch" in unreadable["not_compared"]
    (staging / "candidate" / "graph.json").write_text(graph(1))  # back to the seed's candidate: iteration 0's
    reverted = aflow.check_duplicate(fake_run.paths, staging)
    assert reverted["duplicate"] and reverted["matches"] == [{"iteration": 0, "status": "committed",
                                                              "by": "content hash"}]


def test_converged_computes_nothing_before_three_scored_iterations(fake_run):
    fake_run.commit([1, 1])
    fake_run.commit([0, 0], parent=0)
    result = aflow.converged(fake_run.paths)
    assert result == {"converged": False, "unchanged_rounds": 0, "top_mean_history": [], "scored_iterations": 2,
                      "note": "fewer than 3 scored iterations: no top-3 mean yet"}
    fake_run.commit([0, 0], parent=0)
    assert aflow.converged(fake_run.paths)["top_mean_history"] == [pytest.approx(100 / 3)]


def test_the_same_change_on_another_parent_is_a_combination_not_a_duplicate(fake_run):
    import json

    def write(folder, programs):  # the graph stays the same: only the programs change
        (folder / "candidate" / "graph.json").write_text(json.dumps({"name": "g", "nodes": {}}))
        (folder / "candidate" / "programs").mkdir(exist_ok=True)
        (folder / "candidate" / "programs" / "lmps.json").write_text(json.dumps(programs, indent=2))

    base = {"planner": "plan()", "composer": "compose()", "parse_query": "parse()"}
    edit = {"planner": "plan(twice=True)"}  # the change iteration 1 made
    fake_run.commit([0, 0])
    fake_run.commit([1, 0], parent=0, description="plan twice")
    fake_run.commit([1, 1], parent=0, description="compose carefully")
    for it, programs in ((0, base), (1, {**base, **edit}), (2, {**base, "composer": "compose(careful=True)"})):
        write(fake_run.paths.iteration(it), programs)
    staging = fake_run.staging("3", description="replan on top of careful composing", parent=2)
    write(staging, {**base, "composer": "compose(careful=True)", **edit})
    result = aflow.check_duplicate(fake_run.paths, staging)
    assert result["duplicate"] is False and result["matches"] == [] and result["same_change_as"] == [1]
    assert result["allowed"].startswith("different parent: the same change as iteration 1 (made on parent 0)")
    # the same change on the same parent, in new words and another layout, is a duplicate
    again = fake_run.staging("3-b", description="run the planner two times")
    write(again, {})
    (again / "candidate" / "programs" / "lmps.json").write_text(json.dumps({**edit, **base, **edit}))
    dup = aflow.check_duplicate(fake_run.paths, again)
    assert dup["duplicate"] and dup["matches"] == [{"iteration": 1, "status": "committed", "by": "same patch"}]
    assert dup["same_change_as"] == [] and "allowed" not in dup


def test_a_rejected_near_tie_that_is_the_runs_best_says_both():
    table = {"0": {"score": 10.0, "success": {}, "failure": {
        "2": {"modification": "tune planner", "score": 20.0, "axes": [], "verdict": "indistinguishable",
              "gained": 1, "lost": 0, "p_value": 1.0},
        "3": {"modification": "gate actions", "score": 5.0, "axes": [], "verdict": "worse",
              "gained": 0, "lost": 5, "p_value": 0.06}}}}
    text = aflow.render_experience(table, 0, best=2)
    line = next(l for l in text.splitlines() if "tune planner" in l)
    assert "not accepted (indistinguishable); the run's best by mean" in line
    assert "not accepted" not in next(l for l in text.splitlines() if "gate actions" in l)
    assert "ranked by another rule" in text
    assert "the run's best" not in next(l for l in aflow.render_experience(table, 0, best=0).splitlines()
                                        if "tune planner" in l)

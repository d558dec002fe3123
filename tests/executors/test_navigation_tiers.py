"""R2R-family and EQA tiers: duplicate episodes refused by content, not only by key
(issue 26), and fresh EQA questions for the reruns of a deterministic agent."""

import dataclasses
import json
import shutil

import pytest
from navigation_testkit import FIXTURE, needs_full_eqa_data, needs_full_r2r

from harness.errors import UserError
from harness.evaluation.evaluator import fresh_episodes, fresh_unavailable
from harness.executor_api import load_executor
from harness.rundir import tiers


def _with_tiers(executor, extra: dict):
    profile = dict(executor.profile, tiers=dict(executor.profile["tiers"], **extra))
    return dataclasses.replace(executor, profile=profile)


@pytest.fixture
def twin_instruction_data(tmp_path, monkeypatch):
    """The Matterport3D fixture with path 1118's first instruction repeated as its fourth (1118_3)."""
    root = tmp_path / "mp3d"
    shutil.copytree(FIXTURE, root)
    path = root / "r2r" / "R2R" / "R2R_train.json"
    items = json.loads(path.read_text())
    item = next(i for i in items if i["path_id"] == 1118)
    item["instructions"].append("  " + item["instructions"][0].replace(" ", "  ") + " ")  # whitespace differs only
    path.write_text(json.dumps(items))
    monkeypatch.setenv("ARCHITECT_DATA_DIR", str(root))


@pytest.mark.parametrize("name", ["mapgpt", "smartway"])
def test_a_tier_with_one_instruction_under_two_ids_is_refused_naming_both(name, twin_instruction_data):
    executor = _with_tiers(load_executor(name), {"twins": {"episodes": [
        {"split": "train", "instr_id": "1118_0"}, {"split": "train", "instr_id": "1118_1"},
        {"split": "train", "instr_id": "1118_3"}]}})
    audit = tiers.audit_tier(executor, "twins")
    assert (audit["episodes"], audit["distinct"], audit["by"]) == (3, 2, "content")
    assert audit["duplicates"] == [["1118_0", "1118_3"]]
    with pytest.raises(UserError, match=r"'twins'.*same content.*1118_0 = 1118_3; only 2 of its 3"):
        tiers.refuse_duplicates(executor, ["twins"])


@needs_full_r2r
def test_r2r_twins_in_the_real_data_are_one_episode():
    executor = _with_tiers(load_executor("mapgpt"), {"real_twins": {"episodes": [
        {"split": "train", "instr_id": "5487_0"}, {"split": "train", "instr_id": "5487_2"},
        {"split": "val_unseen", "instr_id": "1894_0"}, {"split": "val_unseen", "instr_id": "1894_1"},
        {"split": "val_unseen", "instr_id": "1894_2"}]}})
    assert tiers.audit_tier(executor, "real_twins")["duplicates"] == [["5487_0", "5487_2"], ["1894_0", "1894_1"]]


def test_an_eqa_tier_with_one_question_under_two_ids_is_refused_naming_both(fixture_data, monkeypatch):
    from executors.eqa.questions import question_set

    questions = question_set()
    scan = questions.scan("GdvgFV5R1Z5")
    twin = dict(scan[0], question_id="GdvgFV5R1Z5-90")   # the same question, start and answer, another id
    monkeypatch.setitem(questions._by_scan, "GdvgFV5R1Z5", [*scan, twin])
    executor = _with_tiers(load_executor("eqa"), {"twins": {"episodes": [
        {"question_id": scan[0]["question_id"]}, {"question_id": scan[1]["question_id"]},
        {"question_id": "GdvgFV5R1Z5-90"}]}})
    with pytest.raises(UserError, match=rf"'twins'.*same content.*{scan[0]['question_id']} = GdvgFV5R1Z5-90; "
                                        r"only 2 of its 3"):
        tiers.refuse_duplicates(executor, ["twins"])


def test_eqa_questions_differing_only_in_their_start_are_distinct(fixture_data, monkeypatch):
    from executors.eqa.questions import question_set

    questions = question_set()
    scan = questions.scan("gZ6f7yhEvPG")
    moved = dict(scan[0], question_id="gZ6f7yhEvPG-91", start=dict(scan[0]["start"], heading=0.5))
    monkeypatch.setitem(questions._by_scan, "gZ6f7yhEvPG", [*scan, moved])
    executor = _with_tiers(load_executor("eqa"), {"moved": {"episodes": [
        {"question_id": scan[0]["question_id"]}, {"question_id": "gZ6f7yhEvPG-91"}]}})
    assert tiers.audit_tier(executor, "moved")["distinct"] == 2


def _scan(question_id: str) -> str:
    return question_id.rsplit("-", 1)[0]


def test_fresh_eqa_questions_are_unused_ones_of_the_same_split(fixture_data):
    from executors.eqa.questions import question_set

    ex = load_executor("eqa")
    smoke = [ex.episodes("smoke")[i] for i in (0, 2, 4)]   # as many as the fixture's four scans have unused
    used = {e["question_id"] for name in ex.profile["tiers"] for e in ex.episodes(name)}
    train = {"GdvgFV5R1Z5", "gZ6f7yhEvPG"}
    fresh = fresh_episodes(ex, "smoke", smoke, 10_000_000)
    assert not {e["question_id"] for e in fresh} & used
    assert len({e["question_id"] for e in fresh}) == len(smoke)
    assert [_scan(e["question_id"]) in train for e in fresh] == [_scan(e["question_id"]) in train for e in smoke]
    assert all(e["max_steps"] == question_set().question(e["question_id"])["max_steps"] for e in fresh)
    assert all(e["episode_id"] == f"{e['question_id']}~fresh10000000" for e in fresh)
    assert fresh_episodes(ex, "smoke", smoke, 10_000_000) == fresh
    assert fresh_episodes(ex, "smoke", smoke, 20_000_000) != fresh


def test_too_few_unused_eqa_questions_is_a_reason_certification_gives(fixture_data):
    from harness.rundir.certify import _note

    ex = load_executor("eqa")   # the fixture's two train scans hold fewer unused questions than smoke has there
    why = fresh_unavailable(ex, "smoke")
    assert why == "EQA train scans: 2 questions no tier uses, 3 fresh ones needed"
    with pytest.raises(UserError, match=why):
        fresh_episodes(ex, "smoke", ex.episodes("smoke"), 7)
    assert _note(True, "the tier's", "eqa", why) == ("the agents are deterministic: reruns on the same episodes are "
                                                     f"identical, and no fresh episodes could be drawn: {why}; so "
                                                     "certification stopped after the two probe reruns")


@needs_full_eqa_data
def test_fresh_eqa_questions_for_the_search_tier_never_come_from_the_holdout_scans():
    from executors.eqa.draw_tiers import holdout_scans
    from executors.eqa.questions import question_set

    ex = load_executor("eqa")
    sealed = holdout_scans(question_set())
    used = {e["question_id"] for name in ex.profile["tiers"] for e in ex.episodes(name)}
    fresh = fresh_episodes(ex, "search", ex.episodes("search"), 10_000_000)
    assert len({e["question_id"] for e in fresh}) == 100
    assert not {e["question_id"] for e in fresh} & used
    assert not {_scan(e["question_id"]) for e in fresh} & sealed
    with pytest.raises(UserError, match=r"2 question\(s\) of the tier .* outside R2R train and val_unseen"):
        fresh_episodes(ex, "holdout", ex.episodes("holdout")[:2], 10_000_000)


def test_without_the_data_the_audit_is_by_key_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("ARCHITECT_DATA_DIR", str(tmp_path / "empty"))
    executor = _with_tiers(load_executor("mapgpt"), {"keys_only": {"episodes": [
        {"split": "train", "instr_id": "1118_0"}, {"split": "train", "instr_id": "1118_1"}]}})
    audit = tiers.audit_tier(executor, "keys_only")
    assert (audit["distinct"], audit["by"], audit["duplicates"]) == (2, "episode key", [])
    why = audit["content_unavailable"]
    assert "R2R data missing" in why and "architect data fetch r2r" in why
    monkeypatch.setenv("ARCHITECT_DATA_DIR", str(FIXTURE))      # not cached: with the data it audits by content
    assert tiers.audit_tier(executor, "keys_only")["by"] == "content"

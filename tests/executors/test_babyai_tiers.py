"""Tiers hold distinct episodes by content, not only by key (issue 26: BabyAI's
SynthSeq and BossLevel generate the same mission on the same seed)."""

import dataclasses

import pytest

from harness.errors import UserError
from harness.executor_api import load_executor
from harness.rundir import tiers


def _with_tiers(executor, extra: dict):
    profile = dict(executor.profile, tiers=dict(executor.profile["tiers"], **extra))
    return dataclasses.replace(executor, profile=profile)


def test_a_tier_with_the_same_mission_under_two_level_ids_is_refused_by_content():
    executor = _with_tiers(load_executor("babyai"), {
        "twins": {"episodes": [{"level": "BabyAI-BossLevel-v0", "seed": 7}, {"level": "BabyAI-SynthSeq-v0", "seed": 7},
                               {"level": "BabyAI-SynthSeq-v0", "seed": 8}]},
        "sealed_twins": {"sealed": True, "episodes": [{"level": "BabyAI-BossLevel-v0", "seed": 9},
                                                      {"level": "BabyAI-SynthSeq-v0", "seed": 9}]}})
    audit = tiers.audit_tier(executor, "twins")
    assert audit == {"tier": "twins", "episodes": 3, "distinct": 2, "by": "content",
                     "duplicates": [["BabyAI-BossLevel-v0:7", "BabyAI-SynthSeq-v0:7"]]}
    assert tiers.audit_tier(executor, "twins") == audit   # from the cache the second time
    with pytest.raises(UserError, match=r"'twins'.*1 pair\(s\), e.g. BabyAI-BossLevel-v0:7 = BabyAI-SynthSeq-v0:7; only 2 of its 3"):
        tiers.refuse_duplicates(executor, ["twins"])
    with pytest.raises(UserError, match=r"'sealed_twins'.*1 pair\(s\)") as info:
        tiers.refuse_duplicates(executor, ["sealed_twins"])
    assert ":9" not in info.value.message   # a sealed tier's episode ids are never shown


def test_the_hard_tiers_hold_only_distinct_episodes():
    executor = load_executor("babyai")
    audits = tiers.refuse_duplicates(executor, ["search-hard", "holdout-hard"])
    assert {t: (a["episodes"], a["distinct"]) for t, a in audits.items()} == {"search-hard": (100, 100),
                                                                              "holdout-hard": (200, 200)}

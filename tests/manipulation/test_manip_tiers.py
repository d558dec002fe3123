"""Manipulation tiers by content (issue 26): two seeds that reset robosuite to one state are one episode."""

from __future__ import annotations

import dataclasses

import pytest

from executors import load_executor
from harness.errors import UserError
from harness.rundir import tiers


def test_two_seeds_with_one_reset_state_are_refused_naming_both():
    ex = load_executor("manipulation")
    twins = {"episodes": [{"level": "Lift", "seed": 3}, {"level": "Lift", "seed": 3 + 2**32},
                          {"level": "Lift", "seed": 4}]}
    executor = dataclasses.replace(ex, profile=dict(ex.profile, tiers=dict(ex.profile["tiers"], twins=twins)))
    audit = tiers.audit_tier(executor, "twins")
    assert (audit["episodes"], audit["distinct"], audit["by"]) == (3, 2, "content")
    with pytest.raises(UserError, match=rf"'twins'.*same content.*Lift:3 = Lift:{3 + 2**32}; only 2 of its 3"):
        tiers.refuse_duplicates(executor, ["twins"])

"""Choosing where episodes run: caller, environment, executor profile, default;
and how workers, threads and episodes in flight are planned."""

from __future__ import annotations

import pytest

from harness.errors import UserError
from harness.evaluation.backends import LocalBackend, choose_backend, make_plan


def test_the_caller_wins_then_the_environment_then_the_profile(monkeypatch):
    monkeypatch.delenv("ARCHITECT_BACKEND", raising=False)
    assert isinstance(choose_backend(None, None, {}), LocalBackend)
    assert isinstance(choose_backend(None, None, {"evaluation": {"backend": "local"}}), LocalBackend)
    monkeypatch.setenv("ARCHITECT_BACKEND", "spark")
    with pytest.raises(UserError, match="unknown evaluation backend 'spark'"):
        choose_backend(None, None, {"evaluation": {"backend": "local"}})
    assert isinstance(choose_backend("local", None, {}), LocalBackend)
    with pytest.raises(UserError, match="--ray-address needs --backend ray"):
        choose_backend("local", "auto", {})


def test_plan_shares_episodes_in_flight_among_workers():
    assert make_plan(2, None, None) == make_plan(2, 2, None)
    plan = make_plan(2, None, 32)  # a model graph: the profile's concurrency in flight
    assert (plan.workers, plan.threads, plan.in_flight) == (2, 16, 32)
    plan = make_plan(8, 3, None)  # never more workers than episodes in flight
    assert (plan.workers, plan.threads, plan.in_flight) == (3, 1, 3)

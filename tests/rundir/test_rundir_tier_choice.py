"""Choosing a run's tier: `architect executors` lists every tier (size, kind, groups, the
holdout a search tier is certified on); init refuses another variant's split and warns
when a tier covers fewer groups than its holdout; an episode cap takes a subset balanced
over the groups; certification of a deterministic agent without fresh episodes stops
after its probe."""

from __future__ import annotations

import json

import pytest
from rundir_kit import cli

from harness.tier_groups import balanced_subset, subset_text


def test_executors_lists_each_tier_with_its_kind_groups_and_holdout():
    listing = {ex["name"]: ex for ex in cli("executors")["executors"]}
    babyai = listing["babyai"]["tiers"]
    assert babyai["search-hard"]["kind"] == "search" and babyai["search-hard"]["certifies_against"] == "holdout-hard"
    assert babyai["search"]["certifies_against"] == "holdout" and babyai["search"]["episodes"] == 100
    assert babyai["holdout"]["kind"] == "sealed holdout" and "certifies_against" not in babyai["holdout"]
    assert babyai["smoke"]["kind"] == "smoke" and sum(babyai["smoke"]["groups"].values()) == 5
    assert babyai["shaper_train"]["kind"] == "split" and "SHAPER train" in babyai["shaper_train"]["split"]
    libero = listing["libero"]["tiers"]
    assert listing["libero"]["group_key"] == "suite" and libero["protocol"]["kind"] == "protocol"
    assert set(libero["shaper_train"]["groups"]) == {"libero_spatial", "libero_object", "libero_goal"}
    assert "libero_10" in libero["holdout"]["groups"] and libero["search"]["groups"] == {
        "libero_spatial": 10, "libero_object": 10, "libero_goal": 10, "libero_10": 10}


def test_init_refuses_another_variants_split_as_the_search_tier(tmp_path):
    refused = cli("init", "random", "babyai", "--tier", "shaper_train", "--dry-run", "--runs-dir", str(tmp_path),
                  ok=False)
    assert refused["_exit_code"] != 0
    assert "SHAPER's train split" in refused["error"] and "choose one of" in refused["error"]
    assert "search-hard" in refused["error"] and not any(tmp_path.iterdir())


def test_dry_run_warns_when_the_tier_misses_groups_of_its_holdout(tmp_path):
    episodes = tmp_path / "one-level.jsonl"
    episodes.write_text("".join(json.dumps({"level": "BabyAI-GoTo-v0", "seed": s}) + "\n" for s in (1, 2)))
    plan = cli("init", "random", "babyai", "--episodes", str(episodes), "--dry-run")
    [warning] = plan["warnings"]
    assert "covers 1 of the 9 groups (level) its holdout 'holdout' covers" in warning
    assert "BabyAI-BossLevel-v0" in warning and "BabyAI-GoTo-v0," not in warning
    assert cli("init", "random", "babyai", "--dry-run")["warnings"] == []


def test_an_episode_cap_takes_the_groups_in_turn_and_says_so():
    episodes = [{"episode_id": f"{g}:{i}", "suite": g} for g in ("a", "b", "c") for i in range(4)]
    chosen = balanced_subset(episodes, 5, "suite")
    assert [e["episode_id"] for e in chosen] == ["a:0", "a:1", "b:0", "b:1", "c:0"]
    assert balanced_subset(episodes, 5, "level") == episodes[:5]  # no such key: one group, the first N
    assert balanced_subset(episodes, 50, "suite") == episodes
    assert subset_text(episodes, 5, "suite").endswith("over its 3 groups (suite) in tier order: a 2, b 2, c 1")
    assert subset_text(episodes, None, "suite") is None
    plan = cli("init", "random", "voxposer-libero-scripted", "--eval-episodes", "4", "--dry-run")
    assert plan["tiers"]["performance"]["episode_ids"] == ["libero_spatial:0:0", "libero_object:0:0",
                                                           "libero_goal:0:0", "libero_10:0:0"]
    assert "round-robin over its 4 groups (suite)" in plan["eval_subset"]


class _Run:
    manifest = {"executor": "eqa"}

    def tier(self, _kind):
        return "search", None


@pytest.mark.parametrize("fresh_possible", [False, True])
def test_certification_of_a_deterministic_agent_stops_after_the_probe_without_fresh_episodes(
        monkeypatch, fresh_possible):
    from harness.rundir import certify

    draws = []

    def draw(run, iteration, k, fresh, progress, of, probe=False):
        draws.append((iteration, k, fresh))
        return 0.46, [True, False]  # the same outcomes every time: a deterministic agent

    monkeypatch.setattr(certify, "_draw", draw)
    monkeypatch.setattr(certify, "_no_fresh", lambda run, reruns: None if fresh_possible else "no seed")
    baseline, best, deterministic, used, no_fresh, probe = certify._reruns(_Run(), 3, reruns=3, mode="auto",
                                                                           progress=False)
    assert deterministic is True
    if fresh_possible:
        assert used == "fresh" and len(best["draws"]) == 3 and len(draws) == 4 + 6
        assert probe == {"episode_seeds": "the tier's", "baseline": [0.46, 0.46], "best": [0.46, 0.46]}
    else:  # (the probe's draws are the reported ones: nothing kept apart)
        assert used == "the tier's" and draws == [(0, 1, False), (0, 2, False), (3, 1, False), (3, 2, False)]
        assert probe is None
        note = certify._note(True, used, "eqa", no_fresh)
        assert baseline["draws"] == [0.46, 0.46] and "no seed; so certification stopped after the two probe" in note


def test_certification_of_a_varying_agent_reruns_as_often_as_asked(monkeypatch):
    from harness.rundir import certify

    outcomes = iter([[True], [False]] * 4)
    monkeypatch.setattr(certify, "_draw", lambda run, it, k, fresh, progress, of, probe=False: (0.5, next(outcomes)))
    baseline, best, deterministic, used, _, probe = certify._reruns(_Run(), 2, reruns=4, mode="auto", progress=False)
    assert deterministic is False and len(baseline["draws"]) == len(best["draws"]) == 4 and probe is None


@pytest.mark.parametrize("fresh_possible", [True, False])
def test_the_dry_run_says_when_certification_stops_after_the_probe(monkeypatch, fresh_possible):
    monkeypatch.setattr("harness.evaluation.evaluator.fresh_unavailable",
                        lambda ex, tier, limit=None: None if fresh_possible else "no seed")
    note = cli("init", "random", "babyai", "--eval-episodes", "3", "--dry-run")["certification"]["note"]
    if fresh_possible:
        assert "when the first two reruns are identical for both (deterministic agents), 3 reruns on fresh " \
               "episodes follow them" in note
    else:
        assert "certify stops after those two, as tier 'search' has no fresh episodes (no seed): 552 episodes" in note

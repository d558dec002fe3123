"""profile.yaml: tiers, episode ids, schema validation with errors naming the key."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from executors import ExecutorError, ProfileError, load_executor, load_profile, profile_problems

PROFILE = Path(__file__).resolve().parents[2] / "executors" / "babyai" / "profile.yaml"


@pytest.fixture(scope="module")
def ex():
    return load_executor("babyai")


def test_tiers_sizes_and_ids(ex):
    smoke, search, holdout = (ex.episodes(t) for t in ("smoke", "search", "holdout"))
    assert len(smoke) == 5 and len(search) == 100 and len(holdout) >= 200
    assert ex.sealed == {"holdout", "holdout-hard", "shaper_test"}
    hard, hard_holdout = ex.episodes("search-hard"), ex.episodes("holdout-hard")
    assert len(hard) == 100 and len(hard_holdout) == 200
    assert not {e["episode_id"] for e in hard_holdout} & {e["episode_id"] for e in hard + search}
    for tier in (smoke, search, holdout, hard, hard_holdout):
        ids = [e["episode_id"] for e in tier]
        assert len(set(ids)) == len(ids)
        assert all(e["episode_id"] == f"{e['level']}:{e['seed']}" for e in tier)
        assert all(1 <= e["max_steps"] <= 400 and e["wall_seconds"] > 0 for e in tier)
    assert not {e["episode_id"] for e in holdout} & {e["episode_id"] for e in search + smoke}
    assert not {e["seed"] for e in holdout} & {e["seed"] for e in search}
    assert ex.episodes("search") == search  # fixed and ordered


def test_search_tier_mixes_the_level_families(ex):
    levels = {e["level"] for e in ex.episodes("search")}
    for family in ("Seq", "Maze", "Open", "Unlock", "KeyCorridor", "Boss"):
        assert any(family in level for level in levels), family


def test_profile_fields(ex):
    p = ex.profile
    assert p["primary_metric"] == "success_rate"
    assert {"steps", "reward", "path_efficiency"} <= set(p["secondary_metrics"])
    assert "graph.json" in p["whitelist"] and "nodeset/*.py" in p["whitelist"]
    assert p["model_profile"] is None and p["performance_tier"] == "search"
    assert ex.seed_dir.joinpath("graph.json").is_file()
    assert ex.package_dir.name == "babyai"


def _mutated(tmp_path, mutate) -> Path:
    data = yaml.safe_load(PROFILE.read_text())
    mutate(data)
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("mutate,needle", [
    (lambda d: d.pop("primary_metric"), "'primary_metric' is a required property"),
    (lambda d: d["tiers"]["holdout"].update(sealed=False), "at tiers/holdout/sealed"),
    (lambda d: d["tiers"]["search"]["generate"][0].update(count="ten"), "at tiers/search/generate/0/count"),
    (lambda d: d["budgets"].update(max_steps=0), "at budgets/max_steps"),
    (lambda d: d["whitelist"].append("../harness/**"), "at whitelist/"),
    (lambda d: d.update(performance_tier="bogus"), "at performance_tier"),
    (lambda d: d["tiers"]["holdout"]["generate"][0].update(seed_start=1000), "sealed tier shares"),
    (lambda d: d["tiers"]["smoke"]["episodes"].append(copy.deepcopy(d["tiers"]["smoke"]["episodes"][0])),
     "duplicate episodes"),
])
def test_bad_profile_names_the_key(tmp_path, mutate, needle):
    path = _mutated(tmp_path, mutate)
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    assert needle in str(info.value)
    assert str(path) in str(info.value)


def test_malformed_yaml_names_line(tmp_path):
    path = tmp_path / "profile.yaml"
    path.write_text("tiers:\n  smoke: [\n")
    with pytest.raises(ProfileError, match=r"profile.yaml:\d+:\d+: not valid YAML"):
        load_profile(path)


def test_valid_profile_has_no_problems():
    assert profile_problems(yaml.safe_load(PROFILE.read_text())) == []


def test_unknown_executor_and_tier(ex):
    with pytest.raises(ExecutorError, match="unknown executor 'nope'.*babyai"):
        load_executor("nope")
    with pytest.raises(ExecutorError, match="no tier 'train'"):
        ex.episodes("train")


def test_shaper_splits_are_tiers_and_the_test_split_is_sealed(ex):
    from executors import profile_problems

    splits = ex.profile["splits"]
    train, val, test = (ex.episodes(splits[k]) for k in ("train", "validation", "test"))
    assert (len(train), len(val)) == (15, 24) and len(test) >= 100  # the study's 15 / 24
    ids = [{e["episode_id"] for e in tier} for tier in (train, val, test)]
    assert not ids[0] & ids[1] and not ids[2] & (ids[0] | ids[1])
    profile = dict(ex.profile, splits=dict(splits, test=splits["validation"]))
    assert any("splits/test" in p and "must be sealed" in p for p in profile_problems(profile))
    profile = dict(ex.profile, splits=dict(splits, train="nope"))
    assert any("splits/train" in p and "'nope' is not a tier" in p for p in profile_problems(profile))

"""Episode list files (harness.episode_lists): a researcher's own episodes as a tier of
`experiment run --episodes FILE` and of a run (`init`/`loop --episodes FILE --holdout FILE`,
stored in the manifest's `tiers:`), each episode checked against its executor's schema."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from harness import PROJECT_ROOT
from harness.cli import main
from harness.episode_lists import read_episode_list
from harness.errors import UserError
from harness.executor_api import discover_executors, find_executor
from harness.schemas import validate_instance

EXECUTORS = ("babyai", "mapgpt", "smartway", "eqa", "manipulation", "libero")
# what a tier's expansion adds to the listed episodes (ids, budgets, the tier's own settings)
ADDED_BY_EXPANSION = {"episode_id", "wall_seconds", "slip"}


@pytest.mark.parametrize("name", EXECUTORS)
def test_every_listed_episode_of_each_executors_profile_matches_its_episode_schema(name):
    spec = discover_executors()[name]
    assert spec.episode_schema == f"episode_{name}"
    profile = yaml.safe_load((PROJECT_ROOT / "executors" / name / "profile.yaml").read_text())
    listed = [(tier, e) for tier, t in profile["tiers"].items() for e in t.get("episodes", [])]
    assert listed
    for tier, episode in listed:
        assert validate_instance(spec.episode_schema, episode) == [], (tier, episode)


def test_a_generated_babyai_tier_matches_the_schema_too():
    from harness.executor_api import load_executor

    for episode in load_executor("babyai").episodes("search"):
        kept = {k: v for k, v in episode.items() if k not in ADDED_BY_EXPANSION}
        assert validate_instance("episode_babyai", kept) == [], episode


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD = '{"level": "BabyAI-GoToLocal-v0", "seed": 77}\n\n{"level": "BabyAI-GoToObj-v0", "seed": 3, "max_steps": 9}\n'


@pytest.mark.parametrize("name, text", [("mine.jsonl", GOOD),
                                         ("mine.yaml", "- {level: BabyAI-GoToLocal-v0, seed: 77}\n"
                                                       "- {level: BabyAI-GoToObj-v0, seed: 3, max_steps: 9}\n"),
                                         ("mine.json", json.dumps([{"level": "BabyAI-GoToLocal-v0", "seed": 77},
                                                                   {"level": "BabyAI-GoToObj-v0", "seed": 3,
                                                                    "max_steps": 9}]))])
def test_a_list_reads_in_file_order_in_any_of_its_formats(tmp_path, name, text):
    episodes = read_episode_list(_write(tmp_path, name, text), find_executor("babyai"))
    assert episodes == [{"level": "BabyAI-GoToLocal-v0", "seed": 77},
                        {"level": "BabyAI-GoToObj-v0", "seed": 3, "max_steps": 9}]


@pytest.mark.parametrize("name, text, expected", [
    ("bad.jsonl", '{"level": "BabyAI-GoToLocal-v0", "seed": 1}\n{"level": "BabyAI-GoToLocal-v0", "seed": "x"}\n',
     "bad.jsonl: line 2: not a babyai episode: at /seed: 'x' is not of type 'integer'"),
    ("bad.jsonl", '{"level": "BabyAI-GoToLocal-v0", "seed": 1, "grid": []}\n',
     "bad.jsonl: line 1: not a babyai episode: at /: Additional properties are not allowed ('grid'"),
    ("bad.jsonl", '{"level": "GoToLocal", "seed": 1}\n', "bad.jsonl: line 1: not a babyai episode: at /level:"),
    ("bad.jsonl", '{"seed": 1}\n', "bad.jsonl: line 1: not a babyai episode: at /: 'level' is a required property"),
    ("bad.jsonl", '{"level": "BabyAI-GoToLocal-v0", "seed": 1}\n{"level": "BabyAI-GoToLocal-v0", "seed": 1}\n',
     "bad.jsonl: line 2: repeats the episode of line 1"),
    ("bad.jsonl", '{"level": "BabyAI-GoToLocal-v0", "seed": 1}\n{"level": \n', "bad.jsonl:2:"),
    ("bad.yaml", "- {level: BabyAI-GoToLocal-v0, seed: 1}\n- {level: BabyAI-GoToLocal-v0, seed: -4}\n",
     "bad.yaml: episode [1]: not a babyai episode: at /seed: -4 is less than the minimum of 0"),
    ("bad.yaml", "level: BabyAI-GoToLocal-v0\n", "bad.yaml: an episode list holds a list of episodes, not a dict"),
    ("bad.json", "[]", "bad.json: the episode list holds no episodes"),
    ("bad.txt", "{}", "bad.txt: an episode list is a .jsonl, .json, .yaml or .yml file"),
])
def test_a_bad_list_is_refused_naming_the_file_the_entry_and_the_field(tmp_path, name, text, expected):
    with pytest.raises(UserError) as caught:
        read_episode_list(_write(tmp_path, name, text), find_executor("babyai"))
    assert str(tmp_path / expected) in caught.value.message or expected in caught.value.message, caught.value.message


def test_each_executor_checks_its_own_fields(tmp_path):
    path = _write(tmp_path, "r2r.jsonl",
                  '{"split": "val_unseen", "instr_id": "1304_0"}\n{"split": "test", "instr_id": "1_0"}\n')
    with pytest.raises(UserError, match=r"r2r.jsonl: line 2: not a mapgpt episode: at /split"):
        read_episode_list(path, find_executor("mapgpt"))
    libero = _write(tmp_path, "l.jsonl", '{"suite": "libero_spatial", "task": 0, "init_state": 0, "max_steps": 5}\n')
    with pytest.raises(UserError, match=r"l.jsonl: line 1: not a libero episode: at /: Additional properties"):
        read_episode_list(libero, find_executor("libero"))


def _run(args):
    result = CliRunner().invoke(main, args)
    return result, json.loads(result.stdout)


def test_experiment_run_evaluates_the_listed_episodes_as_a_tier_named_after_the_file(tmp_path):
    path = _write(tmp_path, "my-levels.jsonl", GOOD)
    result, body = _run(["experiment", "run", "babyai", "--episodes", str(path), "--workers", "1",
                         "--out", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, result.output
    assert body["tier"] == "my-levels" and body["n_episodes"] == 2 and body["complete"]
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert [e["episode_id"] for e in metrics["episodes"]] == ["BabyAI-GoToLocal-v0:77", "BabyAI-GoToObj-v0:3"]
    assert metrics["episodes"][1]["steps"] <= 9  # the listed step cap holds


def test_experiment_run_refuses_a_bad_list_or_a_profile_tiers_name_and_writes_nothing(tmp_path):
    bad = _write(tmp_path, "bad.jsonl", '{"level": "BabyAI-GoToLocal-v0"}\n')
    result, body = _run(["experiment", "run", "babyai", "--episodes", str(bad), "--out", str(tmp_path / "out"),
                         "--json"])
    assert result.exit_code != 0 and body["ok"] is False
    assert body["error"] == (f"{bad}: line 1: not a babyai episode: at /: 'seed' is a required property "
                             "(schemas/episode_babyai.schema.json)")
    good = _write(tmp_path, "good.jsonl", GOOD)
    result, body = _run(["experiment", "run", "babyai", "--episodes", str(good), "--tier", "smoke",
                         "--out", str(tmp_path / "out"), "--json"])
    assert result.exit_code != 0 and "'smoke' is a tier of executor 'babyai'" in body["error"]
    result, body = _run(["experiment", "run", "babyai", "--episodes", str(good), "--tier", "../../up",
                         "--json"])
    assert result.exit_code != 0 and body["error"].startswith("--tier '../../up': a tier name is")
    result, body = _run(["experiment", "run", "babyai", "--json"])
    assert result.exit_code != 0 and "--tier is required" in body["error"]
    assert not (tmp_path / "out").exists()


def test_a_run_searches_and_certifies_on_its_own_lists_kept_in_the_manifest(tmp_path):
    search = _write(tmp_path, "mine.jsonl", GOOD)
    held = _write(tmp_path, "held.jsonl", '{"level": "BabyAI-GoToObj-v0", "seed": 5}\n')
    runs = tmp_path / "runs"
    result, body = _run(["init", "random", "babyai", "--episodes", str(search), "--holdout", str(held),
                         "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    assert (body["performance_tier"], body["holdout_tier"]) == ("mine", "held")
    assert body["tiers"]["performance"]["episodes"] == 2
    result, body = _run(["init", "random", "babyai", "--episodes", str(search), "--holdout", str(held),
                         "--smoke-episodes", "1", "--runs-dir", str(runs), "--run-id", "own", "--json"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((runs / "own" / "manifest.json").read_text())
    assert manifest["profiles"]["performance_tier"] == "mine" and manifest["profiles"]["holdout_tier"] == "held"
    assert manifest["tiers"]["held"]["sealed"] is True
    assert manifest["tiers"]["mine"]["episodes"][1] == {"level": "BabyAI-GoToObj-v0", "seed": 3, "max_steps": 9}
    metrics = json.loads((runs / "own" / "iterations" / "0" / "eval" / "metrics.json").read_text())
    assert metrics["tier"] == "mine" and len(metrics["episodes"]) == 2


def test_a_holdout_sharing_an_episode_with_another_tier_is_refused(tmp_path):
    search = _write(tmp_path, "mine.jsonl", GOOD)
    held = _write(tmp_path, "held.jsonl", '{"level": "BabyAI-GoToLocal-v0", "seed": 77}\n')
    result, body = _run(["init", "random", "babyai", "--episodes", str(search), "--holdout", str(held),
                         "--runs-dir", str(tmp_path / "runs"), "--json"])
    assert result.exit_code != 0
    assert body["error"] == (f"{held}: the sealed holdout shares 1 episode(s) with tier 'mine', "
                             "e.g. BabyAI-GoToLocal-v0:77")
    assert not (tmp_path / "runs").exists()


def test_a_runs_tier_name_must_be_a_plain_name(tmp_path):
    search = _write(tmp_path, "mine.jsonl", GOOD)
    result, body = _run(["init", "random", "babyai", "--episodes", str(search), "--tier", "../x", "--dry-run",
                         "--json"])
    assert result.exit_code != 0
    assert body["error"].startswith("--tier '../x': a tier name is letters, digits")
    from harness.episode_lists import tier_name

    assert tier_name(tmp_path / "_my levels.jsonl") == "my_levels"

"""Run records are checked by the compiled schema first (jsonschema only explains
a failure): both must give the same yes/no answer, on real records and on many
damaged copies of them."""

from __future__ import annotations

import copy
import json
import random

import pytest

from harness.fileio import read_jsonl
from harness.rundir.create import init_run
from harness.schemas import fast_is_valid, validate_instance, validator

ODD_VALUES = [None, "x", "", -1, 0, 1.5, 10 ** 12, True, [], {}, [1], {"k": 1}]


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    root = tmp_path_factory.mktemp("fastcheck")
    paths = init_run("random", "babyai", runs_dir=root, run_id="r", max_iterations=1, smoke_episodes=1,
                     eval_episodes=2, seed=0)
    it0 = paths.iteration(0)
    found = {"manifest": [json.loads(paths.manifest.read_text())], "state": [json.loads(paths.state.read_text())],
             "ledger_row": read_jsonl(paths.ledger), "metrics": [json.loads((it0 / tier / "metrics.json").read_text()) for tier in ("smoke", "eval")]}
    return {name: docs for name, docs in found.items() if docs}


def _pointers(doc, at=()):
    yield at
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        yield from _pointers(value, at + (key,))


def _damaged(doc, rng: random.Random):
    doc = copy.deepcopy(doc)
    at = rng.choice([p for p in _pointers(doc) if p])
    parent = doc
    for key in at[:-1]:
        parent = parent[key]
    last = at[-1]
    move = rng.random()
    if move < 0.25 and isinstance(parent, dict):
        del parent[last]
    elif move < 0.35 and isinstance(parent, dict):
        parent["unexpected_key"] = 1
    else:
        parent[last] = copy.deepcopy(rng.choice(ODD_VALUES))
    return doc


def test_real_records_pass_both_checks(records):
    for name, docs in records.items():
        for doc in docs:
            assert fast_is_valid(name)(doc) and validator(name).is_valid(doc), name


def test_the_compiled_check_agrees_with_jsonschema_on_damaged_records(records):
    rng = random.Random(16)
    rejected = 0
    for name, docs in records.items():
        fast, slow = fast_is_valid(name), validator(name)
        for _ in range(150):
            doc = _damaged(rng.choice(docs), rng)
            expected = slow.is_valid(doc)
            assert fast(doc) == expected, (name, doc)
            rejected += not expected
    assert rejected > 100  # the damage reached the schemas' rules, not only free-form fields


def test_non_finite_numbers_are_refused_with_the_place_named(records):
    doc = copy.deepcopy(records["state"][0])
    doc["best"] = {"iteration": 0, "score": float("nan")}
    problems = validate_instance("state", doc)
    assert problems and problems[0].startswith("/best/score")

"""The result cache on its own: exact keys, code fingerprint, logs, atomic entries."""

from __future__ import annotations

import gzip

from harness.evaluation.cache import ResultCache, cacheable, code_fingerprint

EP = {"episode_id": "BabyAI-GoTo-v0:7", "level": "BabyAI-GoTo-v0", "seed": 7, "max_steps": 300}
RECORD = {"success": True, "reward": 0.9, "steps": 12, "termination": "success", "error": None,
          "metrics": {"path_efficiency": 0.8}}


def test_round_trip_with_log_and_every_key_part_matters(tmp_path):
    log = tmp_path / "ep.jsonl"
    log.write_text('{"kind": "episode"}\n{"kind": "firing"}\n')
    cache = ResultCache("a" * 64, "search", root=tmp_path / "c", code="v1")
    assert cache.put(EP, RECORD, log)
    restored = tmp_path / "out" / "ep.jsonl"
    assert cache.get(EP, restored) == RECORD and restored.read_text() == log.read_text()
    assert ResultCache("b" * 64, "search", root=tmp_path / "c", code="v1").get(EP, None) is None
    assert ResultCache("a" * 64, "holdout", root=tmp_path / "c", code="v1").get(EP, None) is None
    assert ResultCache("a" * 64, "search", root=tmp_path / "c", code="v2").get(EP, None) is None
    assert cache.get(dict(EP, max_steps=100), None) is None  # same id, different episode spec
    stored = next((tmp_path / "c").rglob("*.jsonl.gz"))
    assert gzip.decompress(stored.read_bytes()) == log.read_bytes()
    assert not list((tmp_path / "c").rglob("*.tmp"))


def test_a_wanted_log_that_was_never_stored_is_a_miss(tmp_path):
    cache = ResultCache("a" * 64, "smoke", root=tmp_path)
    cache.put(EP, RECORD, None)
    assert cache.get(EP, None) == RECORD
    assert cache.get(EP, tmp_path / "want.jsonl") is None


def test_only_clean_results_are_cacheable():
    assert cacheable(RECORD)
    assert not cacheable(dict(RECORD, error="Traceback ...", termination="node_error"))
    assert not cacheable(dict(RECORD, termination="wall_time"))
    assert not cacheable(dict(RECORD, infra_error="worker died"))


def test_code_fingerprint_follows_the_source(tmp_path):
    pkg = tmp_path / "executor"
    pkg.mkdir()
    (pkg / "nodes.py").write_text("X = 1\n")
    first = code_fingerprint(pkg)
    assert code_fingerprint(pkg) == first
    (pkg / "nodes.py").write_text("X = 2\n")
    assert code_fingerprint(pkg) != first


def test_code_fingerprint_covers_the_shared_packages_an_executor_imports(tmp_path):
    root = tmp_path / "plugins"
    for name in ("nav", "shared", "deeper", "unrelated"):
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "nav" / "nodes.py").write_text("from plugins.shared import body\n")
    (root / "shared" / "body.py").write_text("import plugins.deeper.maths\nX = 1\n")
    (root / "deeper" / "maths.py").write_text("Y = 1\n")
    (root / "unrelated" / "other.py").write_text("Z = 1\n")
    first = code_fingerprint(root / "nav")
    (root / "unrelated" / "other.py").write_text("Z = 2\n")
    assert code_fingerprint(root / "nav") == first
    (root / "deeper" / "maths.py").write_text("Y = 2\n")            # reached through plugins.shared
    second = code_fingerprint(root / "nav")
    assert second != first
    (root / "shared" / "body.py").write_text("import plugins.deeper.maths\nX = 2\n")
    assert code_fingerprint(root / "nav") != second

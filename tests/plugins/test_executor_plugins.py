"""Executors are plug-ins: one installed elsewhere shows up and runs; the
in-tree one lists its seeds; `init` takes a seed name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from toy_executor import install_toy_executor

ROOT = Path(__file__).resolve().parents[2]


def architect(*args: str, cwd: Path, extra_path: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(extra_path), env.get("PYTHONPATH", "")) if p)
    code = "import sys; from harness.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_babyai_lists_both_seeds_and_its_dependencies(tmp_path):
    out = architect("executors", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    listing = json.loads(out.stdout)
    babyai = {ex["name"]: ex for ex in listing["executors"]}["babyai"]
    assert set(babyai["seeds"]) == {"babyai", "babyai-llm"}
    assert all(Path(folder, "graph.json").is_file() for folder in babyai["seeds"].values())
    assert babyai["episode_keys"] == ["level", "seed"] and babyai["metrics"]["success_rate"] == "higher"
    assert babyai["optional_dependencies"] == {"openpi_client": True}


def test_a_toy_executor_from_another_package_is_listed_and_loops(tmp_path):
    site = install_toy_executor(tmp_path / "site")
    listed = architect("executors", "--json", cwd=tmp_path, extra_path=site)
    assert listed.returncode == 0, listed.stderr
    toy = {ex["name"]: ex for ex in json.loads(listed.stdout)["executors"]}["toyline"]
    assert list(toy["seeds"]) == ["toyline"] and toy["episode_keys"] == ["goal"]
    assert toy["optional_dependencies"] == {"toyline_missing_extra": False}
    assert "toyline_missing_extra: not installed" in architect("executors", cwd=tmp_path, extra_path=site).stdout

    runs = tmp_path / "runs"
    looped = architect("loop", "random", "toyline", "--iterations", "1", "--max-skips", "4", "--runs-dir", str(runs),
                       "--json", cwd=tmp_path, extra_path=site)
    assert looped.returncode == 0, looped.stderr
    summary = json.loads(looped.stdout)
    assert summary["rows"][0]["iteration"] == 0 and summary["rows"][0]["status"] == "committed"
    assert len(summary["rows"]) >= 2  # the loop proposed at least once on the toy executor's alphabet
    manifest = json.loads((Path(summary["run"]) / "manifest.json").read_text())
    assert (manifest["executor"], manifest["seed_candidate"]) == ("toyline", "toyline")
    logs = Path(summary["run"]) / "iterations" / "0" / "eval" / "episodes"
    assert sorted(p.stem for p in logs.glob("*.jsonl")) == ["2", "4", "6", "8"]  # ids from the toy's episode key


def test_unknown_executor_and_variant_are_refused_with_the_known_ones(tmp_path):
    bad_executor = architect("init", "random", "nope", "--runs-dir", str(tmp_path), "--json", cwd=tmp_path)
    assert bad_executor.returncode == 2
    error = json.loads(bad_executor.stdout)["error"]
    assert "unknown executor or seed 'nope'" in error and "babyai-llm" in error
    bad_variant = architect("init", "nope", "babyai", "--runs-dir", str(tmp_path), "--json", cwd=tmp_path)
    assert bad_variant.returncode == 2
    error = json.loads(bad_variant.stdout)["error"]
    assert "unknown variant 'nope'" in error and all(v in error for v in ("adas", "aflow", "kdloop", "random"))
    assert not any(tmp_path.iterdir())  # nothing was created


def test_init_takes_a_seed_name_and_replays_its_cassette(tmp_path, monkeypatch):
    """`architect init kdloop babyai-llm` (replay mode): iteration 0 is the babyai-llm seed, committed.
    The init cassette covers the whole smoke and search tiers; the test evaluates the first 2 smoke and 3 search
    episodes (how many is not what it checks)."""
    monkeypatch.setenv("ARCHITECT_MODEL_MODE", "replay")
    monkeypatch.setenv("ARCHITECT_CASSETTE", str(ROOT / "tests" / "cassettes" / "babyai_llm_init.jsonl"))
    monkeypatch.setenv("ARCHITECT_CACHE_DIR", str(tmp_path / "cache"))
    out = architect("init", "kdloop", "babyai-llm", "--runs-dir", str(tmp_path / "runs"), "--smoke-episodes", "2",
                    "--eval-episodes", "3", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    run = Path(json.loads(out.stdout)["run"])
    manifest = json.loads((run / "manifest.json").read_text())
    assert (manifest["executor"], manifest["seed_candidate"]) == ("babyai", "babyai-llm")
    assert manifest["caps"]["max_iterations"] == 10  # KDLoop's cap
    assert (run / "iterations" / "0" / "candidate" / "skill.md").is_file()
    log = subprocess.run(["git", "log", "--format=%s"], cwd=run, capture_output=True, text=True, check=True).stdout
    assert log.strip() == "iteration 0: seed candidate"


def test_the_remembered_entry_points_follow_installs_and_edits(tmp_path):
    """Entry points are kept between processes (harness.entry_points): a
    distribution added, its entry_points.txt edited, or a damaged cache file are
    all seen by the next command."""
    cache = tmp_path / "cache"
    env_path = tmp_path / "site"

    def names(extra=None) -> list[str]:
        env = dict(os.environ, ARCHITECT_CACHE_DIR=str(cache))
        if extra is not None:
            env["PYTHONPATH"] = str(extra)
        code = ("import json; from harness.executor_api import discover_executors, discovery_errors; "
                "print(json.dumps([sorted(discover_executors()), sorted(discovery_errors())]))")
        out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=120, check=True)
        return json.loads(out.stdout)

    before = names()
    assert "toyline" not in before[0] and (cache / "entry-points.json").is_file()
    site = install_toy_executor(env_path)
    assert "toyline" in names(site)[0]  # a new sys.path entry
    (site / "toyline-0.1.dist-info" / "entry_points.txt").write_text(
        "[architect.executors]\ntoyline = toyline:NOT_THERE\n")
    assert names(site)[1] == ["toyline"]  # an edited entry_points.txt: now broken, and said so
    (cache / "entry-points.json").write_text("{not json")
    assert names() == before  # a damaged cache is read again from the installed metadata


def test_the_data_command_serves_what_the_specs_declare(tmp_path):
    """`architect data` knows the toy executor's data set from its spec alone."""
    site = install_toy_executor(tmp_path / "site")
    env = dict(os.environ, ARCHITECT_DATA_DIR=str(tmp_path / "data"), PYTHONPATH=str(site))

    def data(*argv):
        code = "import sys; from harness.cli import main; sys.exit(main())"
        return subprocess.run([sys.executable, "-c", code, "data", *argv], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)

    listed = {d["name"]: d for d in json.loads(data("list", "--json").stdout)["datasets"]}
    assert listed["toyfacts"]["executors"] == ["toyline"] and listed["toyfacts"]["present"] is False
    assert listed["toyfacts"]["about"].startswith("toy facts") and "r2r" in listed
    assert data("check", "toyfacts", "--json").returncode == 1
    fetched = json.loads(data("fetch", "toyfacts", "--json").stdout)
    assert fetched["ok"] and fetched["installed"] == 1 and (tmp_path / "data" / "toyfacts" / "facts.json").is_file()
    assert json.loads(data("check", "toyfacts", "--json").stdout)["ok"] is True
    assert {d["name"]: d for d in json.loads(data("list", "--json").stdout)["datasets"]}["toyfacts"]["present"]
    unknown = data("fetch", "nope", "--json")
    assert unknown.returncode == 2
    assert json.loads(unknown.stdout)["error"].startswith("unknown data set 'nope' (declared by the installed "
                                                          "executors: mp3d-regions, r2r, reverie, toyfacts)")


def test_a_data_module_must_keep_the_contract():
    from harness.errors import ExecutorError
    from harness.executor_api import DataRequirement

    with pytest.raises(ExecutorError, match=r"data set 'x': json lacks fetch, import_from, verify, complete, "
                                            r"progress_to_stderr, ABOUT"):
        DataRequirement(name="x", module="json").load()
    with pytest.raises(ExecutorError, match="importing not_a_module_here failed: ModuleNotFoundError"):
        DataRequirement(name="y", module="not_a_module_here").load()
    assert DataRequirement(name="y", module="not_a_module_here").present() is False

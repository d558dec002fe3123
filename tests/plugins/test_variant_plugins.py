"""Variants are plug-ins: one installed elsewhere, with its own CLI group,
shows up in `architect`, loops offline and runs its commands, touching only
its own package and an entry point; the root CLI loads its group only when
asked; command names cannot collide."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from test_executor_plugins import architect
from toy_executor import install_toy_executor
from toy_variant import install_toy_variant

from harness import variant_api
from harness.errors import VariantError
from harness.variant_api import VariantSpec


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    install_toy_executor(root)
    install_toy_variant(root)
    return root


def test_a_toy_variant_brings_its_own_commands(tmp_path, site):
    listing = architect("--help", cwd=tmp_path, extra_path=site)
    assert listing.returncode == 0, listing.stderr
    assert any(line.split()[:4] == ["toystep", "Toy", "variant", "helpers:"] for line in listing.stdout.splitlines())

    runs = tmp_path / "runs"
    looped = architect("loop", "toystep", "toyline", "--iterations", "1", "--runs-dir", str(runs), "--no-certify",
                       "--json", cwd=tmp_path, extra_path=site)
    assert looped.returncode == 0, looped.stderr
    summary = json.loads(looped.stdout)
    committed = [row for row in summary["rows"] if row["status"] == "committed"]
    assert [row["iteration"] for row in committed] == [0, 1]
    assert committed[1]["description"] == "walk forward 1 cell(s) a tick"

    counted = architect("toystep", "count", summary["run_id"], "--runs-dir", str(runs), "--json",
                        cwd=tmp_path, extra_path=site)
    assert counted.returncode == 0, counted.stderr
    assert json.loads(counted.stdout) == {"ok": True, "run": summary["run"], "committed": 2}

    missing = architect("toystep", "count", "nowhere", "--runs-dir", str(runs), "--json", cwd=tmp_path, extra_path=site)
    assert missing.returncode == 2 and json.loads(missing.stdout)["ok"] is False
    assert "nowhere" in json.loads(missing.stdout)["error"] and "Traceback" not in missing.stderr


def test_loop_refuses_options_the_variant_does_not_take(tmp_path, site):
    out = architect("loop", "toystep", "toyline", "--scripted-models", "--runs-dir", str(tmp_path / "runs"), "--json",
                    cwd=tmp_path, extra_path=site)
    assert out.returncode == 2
    assert json.loads(out.stdout)["error"].startswith("--config and --scripted-models are options of variants "
                                                      "with a headless driver (shaper)")
    assert not (tmp_path / "runs").exists()


def test_the_root_command_imports_a_plugin_group_only_when_it_runs(tmp_path, site):
    def modules_after(*argv: str) -> set[str]:
        code = ("import sys, json\nfrom harness.cli import main\ntry:\n"
                f"    main({list(argv)!r})\nexcept SystemExit:\n    pass\nprint(json.dumps(sorted(sys.modules)))")
        out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True,
                             env={**__import__("os").environ, "PYTHONPATH": str(site)})
        return set(json.loads(out.stdout.strip().splitlines()[-1]))

    graph = str(site / "toyline" / "seeds" / "toyline" / "graph.json")
    assert not {"toystep", "toystep.cli"} & modules_after("validate", graph, "--json")
    own = modules_after("toystep", "--help")
    assert "toystep.cli" in own
    assert not {"harness.variants.kdloop.cli", "harness.variants.shaper.cli", "harness.cli.run_cmds"} & own


def test_command_names_are_checked(monkeypatch):
    def variants(**specs):
        monkeypatch.setattr(variant_api, "discover_variants", lambda: specs)

    mine = VariantSpec(name="mine", skill="s.md", fitness="mean", max_iterations=1, commands={"mine": "m.cli:group"})
    variants(mine=mine)
    assert variant_api.variant_commands(reserved={"validate"}) == {"mine": "m.cli:group"}
    twin = VariantSpec(name="twin", skill="s.md", fitness="mean", max_iterations=1, commands={"mine": "t.cli:group"})
    variants(mine=mine, twin=twin)
    with pytest.raises(VariantError, match="'mine' and 'twin' both declare the command 'mine'"):
        variant_api.variant_commands()
    variants(mine=mine)
    with pytest.raises(VariantError, match="declares the command 'mine', which is one of architect's own"):
        variant_api.variant_commands(reserved={"mine"})
    bad = VariantSpec(name="bad", skill="s.md", fitness="mean", max_iterations=1, commands={"Bad Name": "no-colon"})
    assert len(bad.problems()) == 2


def test_the_variant_api_decides_how_a_variant_runs():
    """Headless driver, else offline proposer, else the skill; options that do not apply are refused."""
    shaper, random, kdloop = (variant_api.find_variant(n) for n in ("shaper", "random", "kdloop"))
    assert (shaper.run_mode, random.run_mode, kdloop.run_mode) == (variant_api.HEADLESS, variant_api.OFFLINE,
                                                                    variant_api.SKILL)
    assert shaper.loop_mode("babyai-llm", schedule_options=False, driver_options=True) == variant_api.HEADLESS
    assert random.loop_mode("babyai", schedule_options=True, driver_options=False) == variant_api.OFFLINE
    with pytest.raises(VariantError, match="shaper: its own schedule sets the iteration cap"):
        shaper.loop_mode("babyai-llm", schedule_options=True, driver_options=False)
    with pytest.raises(VariantError, match=r"run it from Claude Code with `/architect:loop kdloop babyai`.* "
                                           r"runs only random offline"):
        kdloop.loop_mode("babyai", schedule_options=False, driver_options=False)
    with pytest.raises(VariantError, match="has no headless driver"):
        random.drive_headless("babyai")

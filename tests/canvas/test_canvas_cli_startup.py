"""The root command imports a subcommand's module only when that command
runs: the table naming each command's module matches what the modules
register, the plug-ins' commands come from their specs, and `architect
validate` leaves the other areas unimported."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import click

from harness.cli import COMMANDS, MODULE_COMMANDS, main, plugin_commands
from harness.executor_api import seed_graph_path


def test_command_table_matches_what_the_modules_register():
    registered = {}
    for module in MODULE_COMMANDS:
        group = click.Group("probe")
        importlib.import_module(f"harness.cli.{module}").register(group)
        registered.update(dict.fromkeys(group.commands, module))
    assert registered == COMMANDS
    # the variants' helper groups are declared by their specs, in their own packages
    plugins = plugin_commands()
    assert set(plugins) == {"adas", "aflow", "kdloop", "random", "shaper"}
    assert all(ref.startswith("harness.variants.") for ref in plugins.values())
    assert set(main.list_commands(click.Context(main))) == set(registered) | set(plugins)


def _validate_modules(seed: str) -> tuple[dict, set[str]]:
    """(validate's JSON, the modules it imported) for a seed's graph, in a fresh process."""
    code = ("import sys, json\nfrom harness.cli import main\ntry:\n"
            f"    main(['validate', {str(seed_graph_path(seed))!r}, '--json'])\n"
            "finally:\n    print(json.dumps(sorted(sys.modules)))")
    subprocess.run([sys.executable, "-c", code], capture_output=True)  # the first one reads the entry points
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip().splitlines()
    return json.loads(out[0]), set(json.loads(out[-1]))


def test_validate_imports_only_its_own_area():
    report, modules = _validate_modules("babyai")
    assert report["valid"]
    assert "harness.cli.canvas_cmds" in modules
    for other in ("harness.cli.run_cmds", "harness.variants", "harness.cli.model_cmds", "harness.models",
                  "harness.evaluation", "harness.canvas.runtime", "jsonpatch", "jsonschema", "importlib.metadata",
                  "numpy.core", "minigrid.core", "rich"):  # (a lazily imported module is only named)
        assert other not in modules, other


def test_llm_types_load_only_for_a_graph_that_uses_them():
    """`llm.*` is a node namespace like an executor's: its modules load on the first `llm.*` lookup."""
    report, modules = _validate_modules("babyai-llm")
    assert report["valid"], report["problems"]
    assert {"harness.models", "harness.models.nodes"} <= modules
    assert "harness.cli.model_cmds" not in modules


def test_help_lists_every_command_without_importing_what_they_run():
    code = ("import sys, json\nfrom harness.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
            "    pass\nprint(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    listing, modules = out.rsplit("\n", 2)[0], set(json.loads(out.strip().splitlines()[-1]))
    assert all(f"  {name} " in listing or f"  {name}\n" in listing for name in [*COMMANDS, *plugin_commands()])
    for heavy in ("harness.models", "harness.evaluation", "harness.canvas.runtime", "jsonschema", "numpy.core", "rich"):
        assert heavy not in modules, heavy

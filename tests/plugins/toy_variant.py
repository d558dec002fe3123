"""A toy search variant shipped as its own installed distribution, for plug-in tests.

`install_toy_variant(root)` writes, under `root` (a folder put on PYTHONPATH):
the package `toystep` — its spec (`__init__.py`), an offline proposer that
makes the toyline agent step forward by a growing stride, and its own CLI
group (`architect toystep count RUN`) in `cli.py` — and
`toystep-0.1.dist-info/` whose entry_points.txt registers it in the
`architect.variants` group. Nothing else is written: that is all a variant
with its own commands needs.
"""

from __future__ import annotations

from pathlib import Path

SPEC = '''"""toystep: steps the toyline agent forward, one stride more per attempt."""

from harness.variant_api import VariantSpec

VARIANT = VariantSpec(name="toystep", skill="toystep/skill.md", fitness="mean", max_iterations=3,
                      offline_proposer="toystep.proposer:propose",
                      commands={"toystep": "toystep.cli:toystep_group"})
'''

PROPOSER = '''import json
from types import SimpleNamespace

from harness.rundir import proposal


def propose(staging, seed, attempt, seen):
    graph_path = staging / "candidate" / "graph.json"
    graph = json.loads(graph_path.read_text())
    graph["nodes"]["walk"] = {"type": "toyline.Forward", "config": {"step": min(3, attempt)}}
    graph_path.write_text(json.dumps(graph, indent=2))
    description = f"walk forward {min(3, attempt)} cell(s) a tick"
    meta, _ = proposal.read(staging / "proposal.md")
    proposal.write(staging / "proposal.md", dict(meta, description=description, axes=["control/action gating"]),
                   "\\nA fixed stride instead of dawdling.\\n")
    return SimpleNamespace(description=description)
'''

CLI = '''"""`architect toystep ...`: the toy variant's helpers."""

import click

from harness.cli.conventions import JSON_OPTION, RUN_ARGUMENT, RUNS_DIR_OPTION, UserError, emit, handled


@click.group("toystep")
def toystep_group():
    """Toy variant helpers: count a run's committed iterations."""


@toystep_group.command("count")
@RUN_ARGUMENT
@RUNS_DIR_OPTION
@JSON_OPTION
@handled
def count_cmd(run, runs_dir, as_json):
    """Count RUN's committed iterations (iteration 0 included)."""
    from harness.rundir.layout import resolve_run
    from harness.rundir.ledger import read_rows

    paths = resolve_run(run, runs_dir)
    committed = sum(row["status"] == "committed" for row in read_rows(paths.ledger))
    if committed == 0:
        raise UserError(f"{run}: no committed iteration yet")
    emit({"ok": True, "run": str(paths.root), "committed": committed}, as_json, human=str(committed))
'''


def install_toy_variant(root: Path) -> Path:
    package = root / "toystep"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(SPEC)
    (package / "proposer.py").write_text(PROPOSER)
    (package / "cli.py").write_text(CLI)
    dist = root / "toystep-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toystep\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[architect.variants]\ntoystep = toystep:VARIANT\n")
    return root

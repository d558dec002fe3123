"""`architect data`: fetch, import and check the data sets executors read."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.output import emit
from harness.errors import UserError
from harness.cli.run_options import JSON_OPTION, handled as _handled

DATASETS = {"r2r": "executors.mp3d.data_r2r", "reverie": "executors.eqa.data_reverie",
            "mp3d-regions": "executors.eqa.data_regions"}


def _module(name: str):
    import importlib

    if name not in DATASETS:
        raise UserError(f"unknown data set {name!r} (known: {', '.join(sorted(DATASETS))})")
    return importlib.import_module(DATASETS[name])


@click.group("data")
def data_group() -> None:
    """Data sets of the executors (r2r for mapgpt, smartway and eqa; reverie and mp3d-regions for eqa):
    fetch, import, check."""


@data_group.command("fetch")
@click.argument("dataset")
@click.option("--from", "source", type=click.Path(path_type=Path), default=None,
              help="Import a local copy of the data set instead of downloading it.")
@click.option("--dest", type=click.Path(path_type=Path), default=None,
              help="Target folder (default: <data folder>/<dataset>; data folder = $ARCHITECT_DATA_DIR, "
                   "else $XDG_DATA_HOME/architect or ~/.local/share/architect).")
@JSON_OPTION
@_handled
def fetch_cmd(dataset, source, dest, as_json):
    """Download DATASET from its public sources (or import it with --from),
    checking every file against its checksum. Resumable: files already present
    and correct are kept; rerun after an interruption."""
    module = _module(dataset)
    say = (lambda m: None) if as_json else module.progress_to_stderr
    if source is not None:
        result = module.import_from(source, dest, say=say)
    else:
        result = module.fetch(dest, say=say)
    if result["failed"]:
        first = result["failed"][0]
        raise UserError(f"{len(result['failed'])} file(s) could not be fetched, first {first['file']}: "
                        f"{first['error']}; rerun the same command to resume", details=result)
    emit(dict(result, ok=True, dataset=dataset), as_json,
         human=f"{dataset}: {result['installed']} file(s) installed, {result['already_present']} already present "
               f"in {result['dest']}")


@data_group.command("check")
@click.argument("dataset")
@click.option("--dest", type=click.Path(path_type=Path), default=None, help="Folder to check (default: the data folder).")
@JSON_OPTION
@_handled
def check_cmd(dataset, dest, as_json):
    """Verify every file of DATASET against its checksum; exits 1 when any is missing or wrong."""
    result = _module(dataset).verify(dest)
    shown = ", ".join(result["bad"][:4])
    emit(dict(result, dataset=dataset), as_json,
         human=f"{dataset}: all {result['files']} files correct in {result['root']}" if result["ok"] else
         f"{dataset}: {len(result['bad'])} file(s) missing or wrong in {result['root']}: {shown}")
    if not result["ok"]:
        raise SystemExit(1)


def register(main: click.Group) -> None:
    main.add_command(data_group)

"""`architect data`: list, fetch, import and check the data sets the installed
executors declare (`ExecutorSpec.data`)."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.conventions import JSON_OPTION, UserError, emit, handled


@click.group("data")
def data_group() -> None:
    """Data sets the installed executors declare (e.g. r2r for mapgpt): list, fetch, import, check."""


@data_group.command("list")
@JSON_OPTION
@handled
def list_cmd(as_json):
    """List every declared data set: which executors read it, what it is and where it comes
    from, and whether it is installed and complete."""
    from harness.executor_api import all_datasets

    rows = []
    for name, (requirement, executors) in sorted(all_datasets().items()):
        module = requirement.load()
        rows.append({"name": name, "executors": executors, "module": requirement.module, "about": module.ABOUT,
                     "present": bool(module.complete())})
    human = "\n".join(f"{r['name']}  ({', '.join(r['executors'])}): "
                      f"{'present' if r['present'] else 'MISSING — architect data fetch ' + r['name']}\n  {r['about']}"
                      for r in rows) or "no installed executor declares a data set"
    emit({"ok": True, "datasets": rows}, as_json, human=human)


@data_group.command("fetch")
@click.argument("dataset")
@click.option("--from", "source", type=click.Path(path_type=Path), default=None,
              help="Import a local copy of the data set instead of downloading it.")
@click.option("--dest", type=click.Path(path_type=Path), default=None,
              help="Target folder (default: <data folder>/<dataset>; data folder = $ARCHITECT_DATA_DIR, "
                   "else $XDG_DATA_HOME/architect or ~/.local/share/architect).")
@JSON_OPTION
@handled
def fetch_cmd(dataset, source, dest, as_json):
    """Download DATASET from its public sources (or import it with --from),
    checking every file against its checksum. Resumable: files already present
    and correct are kept; rerun after an interruption."""
    from harness.executor_api import find_dataset

    from harness.roots import data_home

    module = find_dataset(dataset).load()
    say = (lambda m: None) if as_json else module.progress_to_stderr
    where = (f"into {dest}" if dest is not None else
             f"into {data_home() / dataset} (the data folder: $ARCHITECT_DATA_DIR, else $XDG_DATA_HOME/architect "
             "or ~/.local/share/architect; --dest or ARCHITECT_DATA_DIR changes it)")
    click.echo(f"{dataset}: {'importing from ' + str(source) if source is not None else 'fetching'} {where}", err=True)
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
               f"in {result['dest']} (a later run finds it there; set ARCHITECT_DATA_DIR to use another data folder)")


@data_group.command("check")
@click.argument("dataset")
@click.option("--dest", type=click.Path(path_type=Path), default=None, help="Folder to check (default: the data folder).")
@JSON_OPTION
@handled
def check_cmd(dataset, dest, as_json):
    """Verify every file of DATASET against its checksum; exits 1 when any is missing or wrong."""
    from harness.executor_api import find_dataset

    result = find_dataset(dataset).load().verify(dest)
    shown = ", ".join(result["bad"][:4])
    emit(dict(result, dataset=dataset), as_json,
         human=f"{dataset}: all {result['files']} files correct in {result['root']}" if result["ok"] else
         f"{dataset}: {len(result['bad'])} file(s) missing or wrong in {result['root']}: {shown}")
    if not result["ok"]:
        raise SystemExit(1)


def register(main: click.Group) -> None:
    main.add_command(data_group)

"""`architect models ...`: inference profiles, cassettes, context harnesses."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.conventions import JSON_OPTION, UserError, emit, fail, handled


@click.group("models")
def models_group() -> None:
    """Model backends: check inference profiles, inspect cassettes, check context harnesses.

    A graph pins one inference profile (YAML: backend anthropic | openai | replay,
    model, sampling, prices, concurrency, timeout). Set ARCHITECT_MODEL_MODE=replay
    and ARCHITECT_CASSETTE=FILE to run any evaluation from a recorded cassette.
    """


@models_group.command("check")
@click.argument("profile", type=click.Path(dir_okay=False))
@click.option("--ping", is_flag=True, help="Also send one tiny live request and report latency and tokens.")
@JSON_OPTION
@handled
def check_cmd(profile: str, ping: bool, as_json: bool) -> None:
    """Validate inference PROFILE (a YAML file); name every bad key.

    With --ping, call the model once ("Reply with OK.") through the real client,
    with the profile's retries and timeout, and report what came back.
    """
    from harness.models import ModelCallError, load_profile, make_client

    loaded = load_profile(profile)
    payload = {"ok": True, "path": profile, "profile": loaded.to_dict(), "api_key_set": loaded.api_key() is not None}
    if ping:
        client = make_client(loaded)
        try:
            reply = client.complete("Reply with OK.", max_tokens=16)
        except ModelCallError as exc:
            raise UserError(f"ping failed: {exc}") from None
        finally:
            client.close()
        payload["ping"] = reply.to_dict()
    human = f"{profile}: ok ({loaded.backend} {loaded.model}, concurrency {loaded.concurrency})"
    if ping:
        human += f"\nping: {payload['ping']['text']!r} in {payload['ping']['latency_s']:.2f} s"
    emit(payload, as_json, human)


@models_group.command("cassette")
@click.argument("cassette", type=click.Path(dir_okay=False))
@JSON_OPTION
@handled
def cassette_cmd(cassette: str, as_json: bool) -> None:
    """Validate a JSONL CASSETTE and summarise it (entries, models, tokens)."""
    from harness.models.cassette import Cassette

    if not Path(cassette).is_file():
        raise UserError(f"cassette not found: {cassette}")
    loaded = Cassette(cassette)
    entries = loaded.entries()
    models = sorted({e["request"]["model"] for e in entries})
    payload = {"ok": True, "path": cassette, "entries": len(entries), "models": models,
               "input_tokens": sum(e["response"]["input_tokens"] for e in entries),
               "output_tokens": sum(e["response"]["output_tokens"] for e in entries),
               "notes": sorted({e.get("note", "") for e in entries} - {""})}
    emit(payload, as_json, f"{cassette}: {len(entries)} entries, models {', '.join(models) or '-'}")


@models_group.command("check-harness")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--executor", default=None,
              help="Executor (or one of its seeds) whose history format the probes follow (default: the "
                   "executor of the graph.json next to FILE, else the generic format).")
@JSON_OPTION
@handled
def check_harness_cmd(file: str, executor: str | None, as_json: bool) -> None:
    """Check a context harness FILE (build_context.py) the way a candidate is checked.

    Static rules (no imports, no _names, no eval/exec/open, no class/while/global),
    then probe runs on histories generated from the executor's history format
    (empty, one round, typical, long, odd values) in a sandbox process under
    CPU, memory and time limits. Exit 1 with every problem listed.
    """
    from harness.models.context_harness import check_context_harness
    from harness.models.probes import probe_histories

    from harness.executor_api import executor_of

    executor = executor_of(executor).name if executor else _executor_beside(Path(file))
    problems = check_context_harness(file, probe_histories(executor))
    if problems:
        fail(UserError(f"{file}: context harness rejected: {problems[0]}" +
                       (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""),
                       details=problems, exit_code=1), as_json)
    emit({"ok": True, "path": file, "problems": []}, as_json, f"{file}: ok")


def _executor_beside(file: Path) -> str | None:
    """The executor named by the candidate graph.json in FILE's folder, if there is one."""
    from harness.fileio import read_json

    try:
        graph = read_json(file.parent / "graph.json", "graph")
    except UserError:
        return None
    executor = graph.get("executor") if isinstance(graph, dict) else None
    return executor if isinstance(executor, str) else None


def register(main: click.Group) -> None:
    """Attach this module's commands to the root group."""
    main.add_command(models_group)

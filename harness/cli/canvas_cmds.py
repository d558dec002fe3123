"""Canvas subcommands: validate, patch, diff, hash, nodes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

from harness.cli.conventions import JSON_OPTION, UserError, emit, handled


def _console():
    from rich.console import Console

    width = max(shutil.get_terminal_size((160, 24)).columns, 120)
    return Console(width=width, highlight=False, soft_wrap=False)


def _problem_rows(problems) -> str:
    from rich.table import Table
    from rich.text import Text

    table = Table(show_lines=False, pad_edge=False, box=None, header_style="bold")
    for col in ("severity", "code", "where", "message", "hint"):
        table.add_column(col, overflow="fold")
    for p in problems:
        where = ".".join(x for x in (p.node, p.port) if x) or (f"cell {p.cell}" if p.cell else "")
        if p.cell and p.node:
            where += f" cell {p.cell}"
        where = f"{where} @ {p.path or '/'}" if where else (p.path or "/")
        table.add_row(*(Text(x) for x in (p.severity, p.code, where, p.message, p.hint)))
    console = _console()
    with console.capture() as capture:
        console.print(table)
    return capture.get().rstrip("\n")


def _summary_line(payload: dict, label: str) -> str:
    if payload["valid"]:
        extra = f", {payload['warnings']} warning(s)" if payload["warnings"] else ""
        return f"{label}: valid{extra} (graph hash {payload['graph_hash'][:12]})"
    return f"{label}: {payload['errors']} error(s), {payload['warnings']} warning(s)"


def _with_problems(human: str, problems) -> str:
    return _problem_rows(problems) + "\n" + human if problems else human


@click.command("validate")
@click.argument("graphs", metavar="GRAPH...", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option("--candidate-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder with the candidate's nodeset/ and prompts (default: each graph's folder).")
@click.option("--pinned-profile", help="Also require model_profile.name to be this pinned profile.")
@JSON_OPTION
@handled
def validate_cmd(graphs, candidate_dir, pinned_profile, as_json):
    """Statically validate GRAPH (a graph.json or a candidate folder; several may be given).

    Reports every problem at once (schema, unknown types/ports, type
    mismatches, unconnected inputs, cycles, grants, reducers, budgets, model
    profile, privileged leaks, configs), each with its code, location (node,
    port, cell, JSON pointer) and a hint. With --json: one object with the
    problems, counts and graph_hash (several graphs: {ok, valid, graphs: [...]}).
    Exit 0 = valid (warnings allowed), 1 = problems found, 2 = unreadable or
    malformed file (the worst over all graphs given).
    """
    from harness.canvas.graph_files import validate_file

    if len(graphs) == 1:
        report, problems = validate_file(graphs[0], candidate_dir, pinned_profile)
        emit(report, as_json, _with_problems(_summary_line(report, graphs[0]), problems))
        raise SystemExit(0 if report["valid"] else 1)
    results, texts, worst = [], [], 0
    for graph in graphs:
        try:
            report, problems = validate_file(graph, candidate_dir, pinned_profile)
        except UserError as exc:
            results.append({"ok": False, "graph": str(graph), "error": exc.message, "kind": type(exc).__name__})
            texts.append(f"error: {exc.message}")
            worst = max(worst, exc.exit_code)
            continue
        results.append(report)
        texts.append(_with_problems(_summary_line(report, graph), problems))
        worst = max(worst, 0 if report["valid"] else 1)
    emit({"ok": worst < 2, "valid": worst == 0, "graphs": results}, as_json, "\n\n".join(texts))
    raise SystemExit(worst)


@click.command("patch")
@click.argument("graph", type=click.Path(dir_okay=True))
@click.argument("patch_file", metavar="PATCH", type=click.Path(dir_okay=False))
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the patched graph (may be GRAPH itself; written atomically).")
@click.option("--refuse-invalid", is_flag=True,
              help="Do not write OUT if the patched graph has validation errors.")
@JSON_OPTION
@handled
def patch_cmd(graph, patch_file, out, refuse_invalid, as_json):
    """Apply PATCH (structured ops or RFC 6902) to GRAPH and write OUT.

    The patch applies atomically: if any operation fails, the error names
    the operation (index, op, reason) and OUT is not touched. The result is
    validated and its problems reported (--json: applied, written, problems).
    Exit 0 = applied and valid, 1 = patch failed or the result has problems,
    2 = unreadable input.
    """
    from harness.canvas.graph_files import patch_file as apply_patch_file

    report, problems = apply_patch_file(graph, patch_file, out, refuse_invalid=refuse_invalid)
    human = _summary_line(report, str(out))
    for note in report["deprecations"]:
        human += f"\ndeprecated: {note}"
    human = _with_problems(human, problems)
    human += f"\n{'wrote' if report['written'] else 'did not write (invalid)'} {out}"
    emit(report, as_json, human)
    raise SystemExit(0 if report["valid"] else 1)


@click.command("diff")
@click.argument("a", type=click.Path(dir_okay=True))
@click.argument("b", type=click.Path(dir_okay=True))
@JSON_OPTION
@handled
def diff_cmd(a, b, as_json):
    """Print the structured patch that turns graph A into graph B.

    Without --json the output is the patch itself, ready for
    `architect patch A PATCH -o OUT`; with --json one object
    {ok, patch, ops, a_hash, b_hash}.
    """
    from harness.canvas.graph_files import diff_files

    report = diff_files(a, b)
    emit(report, as_json, json.dumps(report["patch"], indent=2))


@click.command("hash")
@click.argument("graph", type=click.Path(dir_okay=True))
@click.option("--candidate", is_flag=True,
              help="Hash the whole candidate folder (graph + prompts, skills, nodeset), not just the graph.")
@JSON_OPTION
@handled
def hash_cmd(graph, candidate, as_json):
    """Print the canonical hash of GRAPH (insensitive to key order and whitespace)."""
    from harness.canvas.graph_files import hash_file

    report = hash_file(graph, candidate=candidate)
    emit(report, as_json, report["hash"])


@click.command("nodes")
@click.option("--executor", help="Also load this executor's node types: an executor or one of its seeds "
                                 "(e.g. babyai, mapgpt-heuristic).")
@click.option("--candidate-dir", type=click.Path(file_okay=False),
              help="Also load a candidate's nodeset/*.py types (as candidate.<Name>).")
@click.option("--role", "roles", multiple=True, metavar="ROLE", help="Only types of this role (repeatable).")
@click.option("--type", "names", multiple=True, metavar="NAME", help="Only this type (repeatable), e.g. babyai.FullMap.")
@JSON_OPTION
@handled
def nodes_cmd(executor, candidate_dir, roles, names, as_json):
    """List the registered node types: ports, role, config schema, behaviour.

    This is the proposer's alphabet: every type a graph node may use.
    `--json` prints {ok, roles, types: [...]}: `roles` maps each role to its
    type names (all types, whatever the filters), `types` has each listed
    type's ports, config schema and full `behaviour` (fallbacks included).
    --role and --type narrow `types`.
    """
    from harness.canvas.registry import alphabet
    from harness.executor_api import executor_of

    every = [nt.to_dict() for nt in alphabet(executor and executor_of(executor).name, candidate_dir).all()]
    by_role: dict[str, list[str]] = {}
    for t in every:
        by_role.setdefault(t["role"], []).append(t["name"])
    for given, known, what in ((roles, by_role, "role"), (names, {t["name"] for t in every}, "type")):
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise UserError(f"no node {what} {', '.join(unknown)}; known: {', '.join(sorted(known))}"
                            + ("" if executor else " (add --executor to load an executor's types)"))
    types = [t for t in every if (not roles or t["role"] in roles) and (not names or t["name"] in names)]
    if as_json:
        emit({"ok": True, "roles": by_role, "types": types}, True)
        return
    click.echo(_types_table(types))
    click.echo(f"{len(types)} node type(s); '?' = optional input / config key; `--json` gives the full config schemas.")


def _config_text(schema: dict) -> str:
    required = set(schema.get("required", []))
    lines = []
    for key, spec in (schema.get("properties") or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        kind = spec.get("type") or ("enum" if "enum" in spec else "any")
        kind = "|".join(kind) if isinstance(kind, list) else kind
        default = f" = {json.dumps(spec['default'])}" if "default" in spec else ""
        lines.append(f"{key}{'' if key in required else '?'}: {kind}{default}")
    return "\n".join(lines) or "-"


def _ports_text(ports: dict, is_input: bool) -> str:
    return "\n".join(
        f"{k}: {v['type']}" + ("?" if is_input and v.get("required") is False else "")
        + (" [privileged]" if v.get("privileged") else "") for k, v in ports.items()) or "-"


def _types_table(types: list[dict]) -> str:
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False, header_style="bold")
    for col in ("type", "role", "inputs", "outputs", "config", "doc"):
        table.add_column(col, overflow="fold")
    for t in types:
        table.add_row(*(Text(x) for x in (
            t["name"], t["role"] or "-", _ports_text(t["inputs"], True), _ports_text(t["outputs"], False),
            _config_text(t["config_schema"]), t["behaviour"] + (" (calls a model)" if t["uses_model"] else ""))))
    console = _console()
    with console.capture() as capture:
        console.print(table)
    return capture.get().rstrip("\n")


COMMANDS = (validate_cmd, patch_cmd, diff_cmd, hash_cmd, nodes_cmd)


def register(main: click.Group) -> None:
    """Attach this module's commands to the root group."""
    for command in COMMANDS:
        main.add_command(command)

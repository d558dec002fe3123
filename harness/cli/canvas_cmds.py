"""Canvas subcommands: validate, patch, diff, hash, nodes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import click

from harness.cli.output import UserError, emit, fail


def _console():
    from rich.console import Console

    width = max(shutil.get_terminal_size((160, 24)).columns, 120)
    return Console(width=width, highlight=False, soft_wrap=False)


def _load(path: str):
    from harness.canvas.graph import load_graph, resolve_graph_path

    graph = load_graph(path)
    graph_path = resolve_graph_path(path)
    return graph, graph_path.parent


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


def _validation_payload(graph, candidate_dir, pinned_profile=None) -> tuple[dict, list]:
    from harness.canvas.hashing import graph_hash
    from harness.canvas.validate import validate_graph

    try:
        problems = validate_graph(graph, candidate_dir=candidate_dir, pinned_profile=pinned_profile)
    except Exception as exc:  # a validator bug must still give a one-line error, not a traceback
        if os.environ.get("ARCHITECT_DEBUG"):
            raise
        raise UserError(f"internal error while validating: {type(exc).__name__}: {exc} "
                        "(set ARCHITECT_DEBUG=1 for the traceback)", exit_code=3) from None
    errors = sum(p.severity == "error" for p in problems)
    payload = {
        "ok": True,
        "valid": errors == 0,
        "errors": errors,
        "warnings": len(problems) - errors,
        "hash": graph_hash(graph),
        "problems": [p.to_dict() for p in problems],
    }
    return payload, problems


def _summary_line(payload: dict, label: str) -> str:
    if payload["valid"]:
        extra = f", {payload['warnings']} warning(s)" if payload["warnings"] else ""
        return f"{label}: valid{extra} (hash {payload['hash'][:12]})"
    return f"{label}: {payload['errors']} error(s), {payload['warnings']} warning(s)"


def register(main: click.Group) -> None:
    """Attach this module's commands to the root group."""

    @main.command("validate")
    @click.argument("graphs", metavar="GRAPH...", nargs=-1, required=True, type=click.Path(dir_okay=True))
    @click.option("--candidate-dir", type=click.Path(file_okay=False),
                  help="Folder with the candidate's nodeset/ and prompts (default: each graph's folder).")
    @click.option("--pinned-profile", help="Also require model_profile.name to be this pinned profile.")
    @click.option("--json", "as_json", is_flag=True,
                  help="Print one JSON object: problems, counts, hash (several graphs: {ok, valid, graphs: [...]}).")
    def validate_cmd(graphs, candidate_dir, pinned_profile, as_json):
        """Statically validate GRAPH (a graph.json or a candidate folder; several may be given).

        Reports every problem at once (schema, unknown types/ports, type
        mismatches, unconnected inputs, cycles, grants, reducers, budgets, model
        profile, privileged leaks, configs), each with its code, location (node,
        port, cell, JSON pointer) and a hint. Exit 0 = valid (warnings allowed),
        1 = problems found, 2 = unreadable or malformed file (the worst over all
        graphs given).
        """
        results, texts, worst = [], [], 0
        for graph in graphs:
            try:
                data, folder = _load(graph)
                payload, problems = _validation_payload(data, Path(candidate_dir) if candidate_dir else folder,
                                                        pinned_profile)
            except UserError as exc:
                if len(graphs) == 1:
                    fail(exc, as_json)
                results.append({"ok": False, "graph": str(graph), "error": exc.message})
                texts.append(f"error: {exc.message}")
                worst = max(worst, exc.exit_code)
                continue
            payload["graph"] = str(graph)
            human = _summary_line(payload, graph)
            if problems:
                human = _problem_rows(problems) + "\n" + human
            results.append(payload)
            texts.append(human)
            worst = max(worst, 0 if payload["valid"] else 1)
        if len(graphs) == 1:
            emit(results[0], as_json, texts[0])
        else:
            emit({"ok": worst < 2, "valid": worst == 0, "graphs": results}, as_json, "\n\n".join(texts))
        raise SystemExit(worst)

    @main.command("patch")
    @click.argument("graph", type=click.Path(dir_okay=True))
    @click.argument("patch_file", metavar="PATCH", type=click.Path(dir_okay=False))
    @click.option("-o", "--out", required=True, type=click.Path(dir_okay=False),
                  help="Where to write the patched graph (may be GRAPH itself; written atomically).")
    @click.option("--refuse-invalid", is_flag=True,
                  help="Do not write OUT if the patched graph has validation errors.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object: applied, written, problems.")
    def patch_cmd(graph, patch_file, out, refuse_invalid, as_json):
        """Apply PATCH (structured ops or RFC 6902) to GRAPH and write OUT.

        The patch applies atomically: if any operation fails, the error names
        the operation (index, op, reason) and OUT is not touched. The result is
        validated and its problems reported. Exit 0 = applied and valid,
        1 = patch failed or the result has problems, 2 = unreadable input.
        """
        from harness.canvas.graph import read_json_file
        from harness.canvas.patch import PatchError, apply_patch, deprecations
        from harness.fileio import shorten

        out_path = Path(out)
        try:
            data, folder = _load(graph)
            patch = read_json_file(patch_file, what="patch")
            result = apply_patch(data, patch)
        except PatchError as exc:  # name the patch file; keep the line short whatever the reason's size
            details = dict(exc.details, reason=shorten(exc.reason), file=str(patch_file))
            fail(UserError(shorten(f"{patch_file}: {exc.message}"), details=details, exit_code=exc.exit_code),
                 as_json)
        except UserError as exc:
            fail(exc, as_json)
        payload, problems = _validation_payload(result, folder)
        write = payload["valid"] or not refuse_invalid
        if write:
            try:
                from harness.fileio import write_text_atomic

                write_text_atomic(out_path, json.dumps(result, indent=2) + "\n")
            except OSError as exc:
                fail(UserError(f"{out_path}: cannot write: {exc.strerror or exc}"), as_json)
        payload.update(applied=True, written=write, out=str(out_path), deprecations=deprecations(patch))
        human = _summary_line(payload, str(out_path))
        for note in payload["deprecations"]:
            human += f"\ndeprecated: {note}"
        if problems:
            human = _problem_rows(problems) + "\n" + human
        human += f"\n{'wrote' if write else 'did not write (invalid)'} {out_path}"
        emit(payload, as_json, human)
        raise SystemExit(0 if payload["valid"] else 1)

    @main.command("diff")
    @click.argument("a", type=click.Path(dir_okay=True))
    @click.argument("b", type=click.Path(dir_okay=True))
    @click.option("--json", "as_json", is_flag=True,
                  help="Print one JSON object {ok, patch, ops, a_hash, b_hash}.")
    def diff_cmd(a, b, as_json):
        """Print the structured patch that turns graph A into graph B.

        Without --json the output is the patch itself, ready for
        `architect patch A PATCH -o OUT`.
        """
        from harness.canvas.hashing import graph_hash
        from harness.canvas.patch import diff_graphs

        try:
            ga, _ = _load(a)
            gb, _ = _load(b)
            patch = diff_graphs(ga, gb)
        except UserError as exc:
            fail(exc, as_json)
        payload = {"ok": True, "patch": patch, "ops": len(patch["ops"]),
                   "a_hash": graph_hash(ga), "b_hash": graph_hash(gb)}
        emit(payload, as_json, json.dumps(patch, indent=2))

    @main.command("hash")
    @click.argument("graph", type=click.Path(dir_okay=True))
    @click.option("--candidate", is_flag=True,
                  help="Hash the whole candidate folder (graph + prompts, skills, nodeset), not just the graph.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object {ok, hash}.")
    def hash_cmd(graph, candidate, as_json):
        """Print the canonical hash of GRAPH (insensitive to key order and whitespace)."""
        from harness.canvas.graph import resolve_graph_path
        from harness.canvas.hashing import candidate_hash, graph_hash

        try:
            data, folder = _load(graph)
            digest = candidate_hash(folder if not Path(graph).is_dir() else Path(graph)) if candidate \
                else graph_hash(data)
        except UserError as exc:
            fail(exc, as_json)
        emit({"ok": True, "hash": digest, "kind": "candidate" if candidate else "graph",
              "path": str(resolve_graph_path(graph))}, as_json, digest)

    @main.command("nodes")
    @click.option("--executor", help="Also load this executor's node types (executors/<NAME>).")
    @click.option("--candidate-dir", type=click.Path(file_okay=False),
                  help="Also load a candidate's nodeset/*.py types (as candidate.<Name>).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object {ok, types: [...]}.")
    def nodes_cmd(executor, candidate_dir, as_json):
        """List the registered node types: ports, role, config schema, behaviour.

        This is the proposer's alphabet: every type a graph node may use.
        `--json` adds each type's full `behaviour` (fallbacks included).
        """
        from harness.canvas.registry import default_registry, for_graph

        try:
            registry = default_registry()
            if executor:
                error = registry.ensure_executor(executor)
                if error:
                    raise UserError(error)
            if candidate_dir:
                registry = for_graph({"executor": executor} if executor else {}, candidate_dir)
                for where, message in registry.load_errors:
                    raise UserError(f"{where}: {message}")
        except UserError as exc:
            fail(exc, as_json)
        types = [nt.to_dict() for nt in registry.all()]
        if as_json:
            emit({"ok": True, "types": types}, True)
            return
        from rich.table import Table
        from rich.text import Text

        table = Table(box=None, pad_edge=False, header_style="bold")
        for col in ("type", "role", "inputs", "outputs", "config", "doc"):
            table.add_column(col, overflow="fold")

        def config(schema):
            required = set(schema.get("required", []))
            lines = []
            for key, spec in (schema.get("properties") or {}).items():
                spec = spec if isinstance(spec, dict) else {}
                kind = spec.get("type") or ("enum" if "enum" in spec else "any")
                kind = "|".join(kind) if isinstance(kind, list) else kind
                default = f" = {json.dumps(spec['default'])}" if "default" in spec else ""
                lines.append(f"{key}{'' if key in required else '?'}: {kind}{default}")
            return "\n".join(lines) or "-"

        def ports(d, is_input):
            return "\n".join(
                f"{k}: {v['type']}" + ("?" if is_input and v.get("required") is False else "")
                + (" [privileged]" if v.get("privileged") else "") for k, v in d.items()) or "-"

        for t in types:
            table.add_row(*(Text(x) for x in (
                t["name"], t["role"] or "-", ports(t["inputs"], True), ports(t["outputs"], False),
                config(t["config_schema"]),
                t["behaviour"] + (" (calls a model)" if t["uses_model"] else ""))))
        console = _console()
        with console.capture() as capture:
            console.print(table)
        click.echo(capture.get().rstrip("\n"))
        click.echo(f"{len(types)} node type(s); '?' = optional input / config key; `--json` gives the full config schemas.")

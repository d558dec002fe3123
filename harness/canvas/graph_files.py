"""The graph-file operations behind `architect validate`, `patch`, `diff` and
`hash`: read a graph file (or a candidate folder), validate it into a report,
apply a patch file and write the result. Errors are `UserError`s naming the
file; the reports are the commands' JSON objects."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness.errors import UserError


def load(path: str | Path) -> tuple[dict, Path]:
    """(graph, the folder its candidate files are in)."""
    from harness.canvas.graph import load_graph, resolve_graph_path

    graph = load_graph(path)
    return graph, resolve_graph_path(path).parent


def validation_report(graph: dict, candidate_dir: Path, pinned_profile: str | None = None) -> tuple[dict, list]:
    """({ok, valid, errors, warnings, hash, problems}, the Problem objects)."""
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
    report = {"ok": True, "valid": errors == 0, "errors": errors, "warnings": len(problems) - errors,
              "graph_hash": graph_hash(graph), "problems": [p.to_dict() for p in problems]}
    return report, problems


def validate_file(path: str, candidate_dir: Path | None, pinned_profile: str | None) -> tuple[dict, list]:
    """The validation report of one graph file, with `graph` naming it."""
    graph, folder = load(path)
    report, problems = validation_report(graph, candidate_dir or folder, pinned_profile)
    report["graph"] = str(path)
    return report, problems


def patch_file(graph_path: str, patch_path: str, out: Path, *, refuse_invalid: bool) -> tuple[dict, list]:
    """Apply the patch file to the graph and write `out` (unless invalid and `refuse_invalid`).

    The result is validated against the folder it is written to (its `nodeset/` and prompts:
    the candidate `out` belongs to), named as `validated_in`. A patch that fails names the
    patch file and the operation; `out` is then untouched."""
    from harness.canvas.graph import read_json_file
    from harness.canvas.patch import PatchError, apply_patch, deprecations
    from harness.fileio import shorten, write_text_atomic

    graph, _ = load(graph_path)
    patch = read_json_file(patch_path, what="patch")
    try:
        result = apply_patch(graph, patch)
    except PatchError as exc:  # name the patch file; keep the line short whatever the reason's size
        details = dict(exc.details, reason=shorten(exc.reason), file=str(patch_path))
        raise UserError(shorten(f"{patch_path}: {exc.message}"), details=details, exit_code=exc.exit_code) from None
    folder = Path(out).resolve().parent
    report, problems = validation_report(result, folder)
    write = report["valid"] or not refuse_invalid
    if write:
        try:
            write_text_atomic(out, json.dumps(result, indent=2) + "\n")
        except OSError as exc:
            raise UserError(f"{out}: cannot write: {exc.strerror or exc}") from None
    report.update(applied=True, written=write, out=str(out), validated_in=str(folder),
                  deprecations=deprecations(patch))
    return report, problems


def diff_files(a: str, b: str) -> dict:
    """{ok, patch, ops, a_hash, b_hash}: the structured patch turning graph A into graph B."""
    from harness.canvas.hashing import graph_hash
    from harness.canvas.patch import diff_graphs

    ga, _ = load(a)
    gb, _ = load(b)
    patch = diff_graphs(ga, gb)
    return {"ok": True, "patch": patch, "ops": len(patch["ops"]), "a_hash": graph_hash(ga), "b_hash": graph_hash(gb)}


def hash_file(path: str, *, candidate: bool) -> dict:
    """{ok, hash, kind, path}: the canonical hash of the graph, or of its whole candidate folder."""
    from harness.canvas.graph import resolve_graph_path
    from harness.canvas.hashing import candidate_hash, graph_hash

    graph, folder = load(path)
    digest = candidate_hash(Path(path) if Path(path).is_dir() else folder) if candidate else graph_hash(graph)
    return {"ok": True, "hash": digest, "kind": "candidate" if candidate else "graph",
            "path": str(resolve_graph_path(path))}

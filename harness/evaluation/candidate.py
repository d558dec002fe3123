"""Resolve and statically check a candidate before any worker starts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.canvas.graph import load_graph, resolve_graph_path
from harness.errors import UserError


@dataclass
class Candidate:
    graph_path: Path
    directory: Path
    graph: dict
    executor: Any  # executors.Executor
    hash: str
    graph_hash: str


def load_candidate(candidate: Path) -> Candidate:
    """Load, validate and hash a candidate; a bad one raises `UserError`."""
    graph_path = resolve_graph_path(candidate)
    directory = graph_path.parent
    graph = load_graph(graph_path)  # GraphLoadError (a UserError) names file, line and column
    name = graph.get("executor")
    if not isinstance(name, str) or not name:
        raise UserError(f"{graph_path}: missing \"executor\" key naming the executor package (e.g. \"babyai\")")
    from executors import load_executor

    try:
        executor = load_executor(name)
    except UserError as err:
        raise UserError(f"{graph_path}: {err.message}", details=err.details) from None
    except (ImportError, KeyError, LookupError, ValueError) as exc:
        raise UserError(f"{graph_path}: cannot load executor {name!r}: {exc}") from None

    from harness.canvas.validate import validate_graph

    problems = validate_graph(graph, candidate_dir=directory)
    errors = [p for p in problems if getattr(p, "severity", "error") == "error"]
    if errors:
        first = errors[0]
        where = first.node or first.path or ""
        raise UserError(
            f"{graph_path}: invalid graph, {len(errors)} problem(s); first: [{first.code}] "
            f"{where + ': ' if where else ''}{first.message}",
            details=[p.to_dict() for p in errors],
        )

    from harness.canvas.hashing import candidate_hash, graph_hash

    ghash = graph_hash(graph)
    # A loose JSON file (not a candidate folder's graph.json) is identified by
    # its graph alone: its folder may hold anything.
    chash = candidate_hash(directory) if graph_path.name == "graph.json" else ghash
    return Candidate(graph_path, directory, graph, executor, chash, ghash)

"""Check-time gate for the model-related files of a candidate.

`candidate_violations(candidate_dir)` checks every context harness the graph
uses (each `llm.ContextHarness` node's `file`, and a top-level
`build_context.py` if present) with `check_context_harness` on probe histories
generated from the graph executor's history format, returning
violations in the shape `architect check` lists: `{code, path, message, hint}`.
"""

from __future__ import annotations

from pathlib import Path

from harness.canvas.graph import flatten
from harness.confine import confined_file
from harness.fileio import read_json
from harness.models.context_harness import check_context_harness
from harness.models.probes import probe_histories

HINT = ("a context harness may not import, use _names, eval/exec/open/getattr, class/global/while; it must "
        "define build_context(history) returning a str for every history the executor's format allows "
        "(schemas/context_history_<executor>.schema.json), within 2 s and 512 MB")


def harness_files(graph: dict) -> list[str]:
    try:
        nodes = flatten(graph).get("nodes", {})
    except Exception:  # an unflattenable graph is reported by graph validation
        nodes = graph.get("nodes", {}) if isinstance(graph, dict) else {}
    specs = [spec for spec in (nodes.values() if isinstance(nodes, dict) else [])
             if isinstance(spec, dict) and spec.get("type") == "llm.ContextHarness"]
    return sorted({str((spec.get("config") if isinstance(spec.get("config"), dict) else {})
                       .get("file", "build_context.py")) for spec in specs})


def candidate_violations(candidate_dir: str | Path, graph: dict | None = None) -> list[dict]:
    candidate = Path(candidate_dir)
    if graph is None:
        try:
            graph = read_json(candidate / "graph.json", "graph")
        except (OSError, ValueError):
            graph = {}
    files = set(harness_files(graph))
    if (candidate / "build_context.py").is_file():
        files.add("build_context.py")
    out = []
    probes = probe_histories(graph.get("executor") if isinstance(graph, dict) else None) if files else []
    for rel in sorted(files):
        if confined_file(rel, [(candidate, candidate)]) is None:
            out.append({"code": "context_harness", "path": "graph.json", "hint": HINT,
                        "message": f"graph.json: context harness file {str(rel)[:200]!r} names no file inside "
                                   "the candidate folder"})
            continue
        for problem in check_context_harness(candidate / rel, probes):
            out.append({"code": "context_harness", "path": rel, "message": f"{rel}: {problem}", "hint": HINT})
    return out

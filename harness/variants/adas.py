"""ADAS helpers: the archive of every committed candidate with its fitness, the
shared history the reflexion rounds read, and the debug-attempt counter.

Nothing is ever removed from the archive: it is rebuilt from the committed
iterations (graph, proposal, bootstrap fitness of the per-episode scores), so a
zero-scoring candidate is an entry like any other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.fileio import write_json_atomic, write_text_atomic
from harness.rundir.layout import RunPaths
from harness.fileio import read_jsonl
from harness.rundir.records import committed_iterations, read_iteration_metrics, read_manifest
from harness.variants.fitness import (
    bootstrap_ci,
    committed_rows,
    episode_scores,
    read_proposal,
)
from harness.variant_api import VariantSpec

VARIANT = VariantSpec(name="adas", skill=".claude/commands/architect/variants/adas.md", fitness="bootstrap",
                      max_iterations=20)

MAX_DEBUG_ATTEMPTS = 3
REFLEXION_ROUNDS = 2


def archive_entries(paths: RunPaths, seed: int = 0) -> list[dict[str, Any]]:
    rows = committed_rows(paths)
    primary = read_manifest(paths).get("profiles", {}).get("primary_metric")
    entries = []
    for iteration in committed_iterations(paths):
        folder = paths.iteration(iteration)
        meta, body = read_proposal(folder / "proposal.md")
        row = rows.get(iteration, {})
        graph_path = folder / "candidate" / "graph.json"
        graph = json.loads(graph_path.read_text(encoding="utf-8")) if graph_path.is_file() else None
        metrics = read_iteration_metrics(paths, iteration)
        fitness = None
        if metrics is not None:
            try:
                fitness = bootstrap_ci(episode_scores(metrics, primary), seed=seed).text()
            except UserError:
                fitness = None
        parent = meta.get("parent", row.get("parent"))
        vs_parent = None
        parent_metrics = read_iteration_metrics(paths, parent) if isinstance(parent, int) else None
        if metrics is not None and parent_metrics is not None:
            from harness.evaluation.compare import verdict_summary

            vs = verdict_summary(parent_metrics, metrics)
            vs_parent = f"{vs['verdict']} (+{vs['gained']}/−{vs['lost']} episodes"
            vs_parent += f", McNemar p={vs['p_value']:.3g})" if vs["p_value"] is not None else ")"
        entries.append({
            "generation": iteration,
            "name": meta.get("description") or row.get("description") or f"iteration {iteration}",
            "parent": parent,
            "axes": meta.get("axes") or row.get("axes") or [],
            "thought": body,
            "graph": graph,
            "fitness": fitness or "not evaluated",
            "vs_parent": vs_parent,
        })
    return entries


def render_archive(entries: list[dict[str, Any]]) -> str:
    lines = [
        "# ADAS archive",
        "",
        f"{len(entries)} committed candidates, oldest first. Fitness is the bootstrap 95% CI of the",
        "per-episode primary score. Learn from all of them, low scorers included; propose something",
        "new rather than a variant of an entry already here.",
    ]
    for e in entries:
        lines += [
            "",
            f"## Generation {e['generation']}: {e['name']}",
            f"- parent: {e['parent']}",
            f"- axes: {', '.join(e['axes']) or 'none'}",
            f"- fitness: {e['fitness']}",
            f"- vs parent (paired, same episodes): {e['vs_parent'] or 'n/a'}",
            "",
            "### Thought",
            e["thought"] or "(none)",
            "",
            "### graph.json",
            "```json",
            json.dumps(e["graph"], indent=1, sort_keys=True) if e["graph"] is not None else "null",
            "```",
        ]
    return "\n".join(lines) + "\n"


def write_archive(paths: RunPaths, seed: int = 0) -> dict[str, Any]:
    entries = archive_entries(paths, seed)
    write_json_atomic(paths.memory / "archive.json", entries)
    write_text_atomic(paths.memory / "archive.md", render_archive(entries))
    return {
        "entries": len(entries),
        "archive_json": str(paths.memory / "archive.json"),
        "archive_md": str(paths.memory / "archive.md"),
        "fitness": {str(e["generation"]): e["fitness"] for e in entries},
    }


# --------------------------------------------------------------------------- history & debug


def debug_path(staging: Path) -> Path:
    return staging / "debug.jsonl"


def record_debug(staging: Path, error: str) -> dict[str, Any]:
    """Count one failed attempt of the staged candidate; at most 3 in all."""
    if not error.strip():
        raise UserError("adas debug: the error text is empty")
    attempts = read_jsonl(debug_path(staging))
    attempts.append({"attempt": len(attempts) + 1, "error": error.strip()})
    write_text_atomic(debug_path(staging), "".join(json.dumps(a) + "\n" for a in attempts))
    used = len(attempts)
    return {
        "attempt": used,
        "max_attempts": MAX_DEBUG_ATTEMPTS,
        "retry": used < MAX_DEBUG_ATTEMPTS,
        "give_up": used >= MAX_DEBUG_ATTEMPTS,
    }


def render_history(paths: RunPaths, staging: Path) -> dict[str, Any]:
    """One history file shared by both reflexion rounds and the debug retries."""
    proposal = staging / "proposal.md"
    if not proposal.is_file():
        raise UserError(f"{proposal}: missing; write the proposal before rendering the history")
    parts = [
        "# ADAS proposal history",
        "",
        f"Archive (read it first): {paths.memory / 'archive.md'}",
        "",
        "## Current proposal",
        proposal.read_text(encoding="utf-8").strip(),
    ]
    rounds = []
    for k in range(1, REFLEXION_ROUNDS + 1):
        path = staging / f"reflexion-{k}.md"
        if path.is_file():
            rounds.append(k)
            parts += ["", f"## Reflexion round {k}", path.read_text(encoding="utf-8").strip()]
    attempts = read_jsonl(debug_path(staging))
    for a in attempts:
        parts += ["", f"## Debug attempt {a['attempt']}: error", "```", a["error"], "```"]
    target = staging / "history.md"
    write_text_atomic(target, "\n".join(parts) + "\n")
    return {
        "history": str(target),
        "reflexion_rounds": rounds,
        "next_round": next((k for k in range(1, REFLEXION_ROUNDS + 1) if k not in rounds), None),
        "debug_attempts": len(attempts),
    }

"""ADAS helpers: the archive of every committed candidate with its fitness, the
shared history the reflexion rounds read, and the debug-attempt counter.

Nothing is ever removed from the archive: it is rebuilt from the committed
iterations (graph, proposal, bootstrap fitness of the per-episode scores), so a
zero-scoring candidate is an entry like any other.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.fileio import read_json, read_jsonl, write_json_atomic, write_text_atomic
from harness.rundir.layout import RunPaths
from harness.rundir.records import committed_iterations, read_iteration_metrics, read_manifest
from harness.variants.fitness import (
    bootstrap_ci,
    committed_rows,
    episode_scores,
    read_proposal,
)

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
        parent = meta.get("parent", row.get("parent"))
        metrics = read_iteration_metrics(paths, iteration)
        fitness = None
        if metrics is not None:
            try:
                fitness = bootstrap_ci(episode_scores(metrics, primary), seed=seed).text()
            except UserError:
                fitness = None
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
            "fitness": fitness or "not evaluated",
            "vs_parent": vs_parent,
            **candidate_change(paths, iteration, parent if iteration != 0 else None),
        })
    return entries


def candidate_change(paths: RunPaths, iteration: int, parent: int | None) -> dict[str, Any]:
    """What an entry changed: its graph diff against the parent (the whole graph for
    the seed) and the text of every other candidate file it added or changed."""
    from harness.canvas.patch import diff_graphs
    from harness.rundir.whitelist import candidate_files

    folder = paths.iteration(iteration) / "candidate"
    own = candidate_files(folder) if folder.is_dir() else {}
    before = {}
    if isinstance(parent, int) and paths.iteration(parent).is_dir():
        before = candidate_files(paths.iteration(parent) / "candidate")
    graph = _json_or_none(own.get("graph.json"))
    diff = None
    if before and graph is not None and _json_or_none(before.get("graph.json")) is not None:
        diff = diff_graphs(_json_or_none(before["graph.json"]), graph)["ops"]
    files = {rel: content.decode("utf-8", "replace") for rel, content in sorted(own.items())
             if rel != "graph.json" and before.get(rel) != content}
    removed = sorted(rel for rel in before if rel not in own)
    return {"graph": graph if diff is None else None, "graph_diff": diff, "files": files, "removed_files": removed}


def _json_or_none(content: bytes | None):
    try:
        return json.loads(content) if content is not None else None
    except ValueError:
        return None


def render_archive(entries: list[dict[str, Any]]) -> str:
    lines = [
        "# ADAS archive",
        "",
        f"{len(entries)} committed candidates, oldest first. Fitness: the bootstrap 95% CI and median",
        "of the mean per-episode primary score on the performance tier (the same figure `architect log`",
        "shows). Each entry shows its idea, its fitness, its graph diff against its parent (ops of",
        "schemas/patch.schema.json) and the code of every file it added or changed (nodeset/*.py, prompts).",
        "Learn from all of them, low scorers included. A new idea is encouraged; building on an entry",
        "with a stated new idea is allowed; an exact or near duplicate of an entry is not.",
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
            "### Idea",
            nested(e["thought"], 4) if (e["thought"] or "").strip() else "(none)",
        ]
        if e.get("graph_diff") is not None:
            lines += ["", f"### Graph diff against generation {e['parent']}", "```json"]
            lines += [json.dumps(op, sort_keys=True) for op in e["graph_diff"]] or ["(graph unchanged)"]
            lines += ["```"]
        elif e.get("graph") is not None:
            lines += ["", "### graph.json", "```json", json.dumps(e["graph"], sort_keys=True), "```"]
        for rel, text in e.get("files", {}).items():
            fence = "python" if rel.endswith(".py") else ""
            lines += ["", f"### {rel}", f"```{fence}", text.rstrip("\n"), "```"]
        if e.get("removed_files"):
            lines += ["", "Removed files: " + ", ".join(e["removed_files"])]
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


_HEADING = re.compile(r"^(#{1,6})(\s)")


def nested(text: str, level: int = 3) -> str:
    """Markdown text shifted (down or up) so that its top headings are at `level` (below the
    history's own `## ` sections; a proposal body's template level, 2); headings inside
    code fences stay as they are."""
    lines = text.strip().splitlines()
    fenced, headings = False, []
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and _HEADING.match(line):
            headings.append(i)
    shift = level - min((len(_HEADING.match(lines[i]).group(1)) for i in headings), default=level)
    for i in headings:
        hashes = _HEADING.match(lines[i]).group(1)
        lines[i] = "#" * max(1, min(6, len(hashes) + shift)) + lines[i][len(hashes):]
    return "\n".join(lines)


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
        nested(proposal.read_text(encoding="utf-8")),
    ]
    rounds = []
    for k in range(1, REFLEXION_ROUNDS + 1):
        path = staging / f"reflexion-{k}.md"
        if path.is_file():
            rounds.append(k)
            parts += ["", f"## Reflexion round {k}", *_reflexion_sections(path.read_text(encoding="utf-8"))]
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


def _reflexion_sections(text: str) -> list[str]:
    """A reflexion round below its history section: the critique at level 3, and the revised
    proposal's own headings (the template's `## Rationale`) one level below its heading."""
    if REVISED_HEADING not in text:
        return [nested(text)]
    critique, revised = text.split(REVISED_HEADING, 1)
    return [part for part in (nested(critique), "#" + REVISED_HEADING, nested(revised, 4)) if part]


# --------------------------------------------------------------------------- reflexion → proposal


REVISED_HEADING = "## Revised proposal"


def apply_revision(staging: Path, round_: int) -> dict[str, Any]:
    """Replace STAGING/proposal.md by the revised proposal of reflexion round `round_`.

    The revision is the text under `## Revised proposal` (a surrounding code fence is
    dropped); its front matter must be valid and keep the staged parent. The
    previous proposal stays as `proposal-before-<round>.md`; nothing changes on error.
    """
    from harness.rundir import proposal as proposal_md

    if round_ not in range(1, REFLEXION_ROUNDS + 1):
        raise UserError(f"adas revise: --round must be 1..{REFLEXION_ROUNDS}, got {round_}")
    source = staging / f"reflexion-{round_}.md"
    if not source.is_file():
        raise UserError(f"{source}: missing; run reflexion round {round_} first")
    text = source.read_text(encoding="utf-8")
    if REVISED_HEADING not in text:
        raise UserError(f"{source}: no '{REVISED_HEADING}' section; the reflexion output must end with it")
    revised = _unfenced(text.split(REVISED_HEADING, 1)[1])
    current = staging / "proposal.md"
    old_meta, _ = proposal_md.read(current)
    candidate = staging / f".proposal-revised-{round_}.md"
    write_text_atomic(candidate, revised)
    try:
        problems = proposal_md.problems(candidate)
        meta, body = proposal_md.read(candidate) if not problems else ({}, "")
    finally:
        candidate.unlink()
    if problems:
        raise UserError(f"{source}: the revised proposal is not a valid proposal.md: {problems[0]['message']}",
                        details=problems)
    if meta.get("parent") != old_meta.get("parent"):
        raise UserError(f"{source}: the revised proposal names parent {meta.get('parent')!r}, "
                        f"but the staged parent is {old_meta.get('parent')!r}; keep the staged parent")
    lifted = nested(body, 2)  # its headings back to the stage template's level (## Rationale)
    if lifted != body.strip() and revised.endswith(body):
        revised = revised[:len(revised) - len(body)] + "\n" + lifted + "\n"
    backup = staging / f"proposal-before-{round_}.md"
    write_text_atomic(backup, current.read_text(encoding="utf-8"))
    write_text_atomic(current, revised)
    return {"proposal": str(current), "previous": str(backup), "round": round_,
            "description": meta.get("description")}


def _unfenced(section: str) -> str:
    text = section.strip("\n")
    lines = text.splitlines()
    if lines and lines[0].startswith("```") and lines[-1].strip() == "```":
        lines = lines[1:-1]
    return "\n".join(lines).strip() + "\n"

"""AFlow helpers: soft-mixed parent selection, per-parent experience, duplicates.

Scores are mean primary scores in percent. A committed child is an accepted
modification of its parent when the paired test on their shared episodes calls
it better, else rejected (worse, or indistinguishable whatever the means: a
higher mean the test cannot tell from noise is not a gain). Failed
attempts (discarded: check, smoke or evaluation failures) never happened as far
as AFlow is concerned: they are in neither list nor in the duplicate check.
Both lists are shown to the proposer as modifications not to repeat.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import UserError
from harness.fileio import read_json, write_json_atomic, write_text_atomic
from harness.rundir.layout import RunPaths
from harness.rundir.ledger import failed, read_rows
from harness.rundir.records import read_iteration_metrics
from harness.variants.fitness import committed_scores, read_proposal

TOP_K = 4
ALPHA = 0.2
LAMBDA = 0.3
MAX_RESAMPLES = 5


# --------------------------------------------------------------------------- selection


def top_candidates(scores_percent: dict[int, float], k: int = TOP_K) -> list[int]:
    """Iteration 0 first (always), then the best other iterations by score, up to k."""
    if 0 not in scores_percent:
        raise UserError("aflow: iteration 0 has no evaluated score yet")
    ranked = sorted((it for it in scores_percent if it != 0), key=lambda it: (-scores_percent[it], it))
    return [0, *ranked[: max(k - 1, 0)]]


def selection_probabilities(scores_percent, alpha: float = ALPHA, lam: float = LAMBDA) -> np.ndarray:
    """p_i = λ/n + (1−λ)·softmax(α(s_i − s_max))."""
    s = np.asarray(scores_percent, dtype=float)
    if s.size == 0:
        raise UserError("aflow: no candidates to select a parent from")
    weights = np.exp(alpha * (s - s.max()))
    return lam / s.size + (1.0 - lam) * weights / weights.sum()


def select_parent(scores_percent: dict[int, float], *, seed: int, iteration: int,
                  k: int = TOP_K, alpha: float = ALPHA, lam: float = LAMBDA) -> dict[str, Any]:
    """Draw one parent; the same (seed, iteration) always draws the same parent."""
    candidates = top_candidates(scores_percent, k)
    probs = selection_probabilities([scores_percent[c] for c in candidates], alpha, lam)
    rng = np.random.default_rng([seed, iteration])
    choice = int(rng.choice(len(candidates), p=probs))
    return {
        "parent": candidates[choice],
        "seed": seed,
        "iteration": iteration,
        "candidates": [
            {"iteration": c, "score_percent": scores_percent[c], "probability": float(p)}
            for c, p in zip(candidates, probs)
        ],
    }


def run_scores_percent(paths: RunPaths) -> dict[int, float]:
    return {it: score * 100.0 for it, score in committed_scores(paths).items()}


# --------------------------------------------------------------------------- experience


def experience(paths: RunPaths) -> dict[str, dict[str, Any]]:
    """Per parent: its score and the accepted (`success`) / rejected (`failure`) children."""
    from harness.evaluation.compare import verdict_summary

    scores = run_scores_percent(paths)
    table: dict[str, dict[str, Any]] = {}
    for row in read_rows(paths.ledger):
        parent = row.get("parent")
        if parent is None or row.get("iteration") == 0 or row.get("status") != "committed":
            continue
        entry = table.setdefault(str(parent), {"score": scores.get(parent), "success": {}, "failure": {}})
        child_score = scores.get(row["iteration"])
        record = {
            "modification": row.get("description", ""),
            "score": child_score,
            "axes": row.get("axes", []),
            "verdict": None,
        }
        child_metrics, parent_metrics = read_iteration_metrics(paths, row["iteration"]), read_iteration_metrics(paths, parent)
        if child_metrics is not None and parent_metrics is not None:
            vs = verdict_summary(parent_metrics, child_metrics)
            record.update(verdict=vs["verdict"], gained=vs["gained"], lost=vs["lost"], p_value=vs["p_value"])
        entry["success" if record["verdict"] == "better" else "failure"][str(row["iteration"])] = record
    return table


def render_experience(table: dict[str, dict[str, Any]], parent: int, best: int | None = None) -> str:
    """PARENT's experience as markdown; `best` (the run's best iteration) is marked where the
    two rules differ: a child that is not accepted here may still be the run's best."""
    entry = table.get(str(parent), {"score": None, "success": {}, "failure": {}})
    score = entry["score"]
    lines = [
        f"# Experience of parent iteration {parent}"
        + (f" (score {score:.1f}%)" if score is not None else ""),
        "",
        "Do not repeat a modification below, accepted or rejected: each is one earlier child of this parent "
        "(this parent does not hold any of them; an accepted child is an iteration of its own, which "
        "`aflow select` can pick as a parent).",
        "",
        "## Accepted (the paired test calls it better than the parent)",
    ]
    lines += _render_records(entry["success"]) or ["- none yet"]
    lines += ["", "## Rejected (worse, or indistinguishable from the parent by the paired test, whatever the mean)", "",
              "The run's best (`state.best`, the default parent) is ranked by another rule: verdict first, then "
              "the mean, so an indistinguishable child with a higher mean can be the best and still be listed here.",
              ""]
    lines += _render_records(entry["failure"], best) or ["- none yet"]
    return "\n".join(lines) + "\n"


def _render_records(records: dict[str, dict[str, Any]], best: int | None = None) -> list[str]:
    out = []
    for key, rec in records.items():
        outcome = f"{rec['score']:.1f}%" if rec["score"] is not None else "not scored"
        if rec.get("verdict"):
            outcome += f", {rec['verdict']} vs parent: +{rec['gained']}/−{rec['lost']} episodes"
            if rec.get("p_value") is not None:
                outcome += f", McNemar p={rec['p_value']:.3g}"
            if rec["verdict"] == "indistinguishable":
                outcome += ", not accepted (indistinguishable)"
                if best is not None and key == str(best):
                    outcome += "; the run's best by mean"
        out.append(f"- [{key}] ({outcome}) {rec['modification']}")
    return out


def write_experience(paths: RunPaths, parent: int, out: Path | None = None) -> dict[str, Any]:
    from harness.rundir import state

    table = experience(paths)
    write_json_atomic(paths.memory / "experience.json", table)
    target = out or (paths.memory / "experience.md")
    best = (state.read(paths).get("best") or {}).get("iteration")
    write_text_atomic(target, render_experience(table, parent, best))
    entry = table.get(str(parent), {"success": {}, "failure": {}})
    return {
        "committed": _commit_if_stopped(paths, [paths.memory / "experience.json", target], parent),
        "parent": parent,
        "accepted": len(entry["success"]),
        "rejected": len(entry["failure"]),
        "experience_json": str(paths.memory / "experience.json"),
        "rendered": str(target),
    }


def _commit_if_stopped(paths: RunPaths, files: list[Path], parent: int) -> str | None:
    """An ended run commits the files at once (no next iteration will; an interrupted one is resumed and
    commits them with its next iteration); the commit, or None."""
    from harness.rundir import gitops, state
    from harness.rundir.lock import run_lock
    from harness.rundir.stopping import END_TRAILER

    current = state.read(paths)
    if current["status"] != "stopped" or current["stop_reason"] == "interrupted":
        return None
    root = paths.root.resolve()
    inside = [f.resolve().relative_to(root).as_posix() for f in files if f.resolve().is_relative_to(root)]
    with run_lock(paths.lock):
        changed = set(gitops.uncommitted(root))
        inside = [f for f in inside if f in changed]
        if not inside:
            return None
        return gitops.commit(root, f"aflow experience of parent {parent} (after the run stopped)",
                             (END_TRAILER, current["attempts"]), inside)


# --------------------------------------------------------------------------- duplicates


def normalise(text: str) -> str:
    return " ".join(str(text).split())


def previous_modifications(paths: RunPaths, exclude_iteration: int | None = None) -> list[dict[str, Any]]:
    """Descriptions of every earlier attempt (ledger) and committed proposal."""
    seen = []
    for row in read_rows(paths.ledger):
        if row.get("iteration") == 0 or not row.get("description") or failed(row):
            continue
        seen.append({"iteration": row["iteration"], "status": row.get("status"), "description": row["description"]})
    if paths.iterations.is_dir():
        for folder in sorted(paths.iterations.iterdir()):
            if folder.name.isdigit() and int(folder.name) not in (0, exclude_iteration):
                meta, _ = read_proposal(folder / "proposal.md")
                if meta.get("description"):
                    seen.append({"iteration": int(folder.name), "status": "committed", "description": meta["description"]})
    return seen


def find_duplicates(description: str, previous: list[dict[str, Any]]) -> list[dict[str, Any]]:
    key = normalise(description)
    return [p for p in previous if normalise(p["description"]) == key]


def normalised_patch(parent_graph: dict, graph: dict) -> str:
    """The structured diff parent -> child as canonical text (op order ignored),
    over graphs whose node configs have their types' defaults filled in (so
    `{"horizon": 1}` and `{}` with default 1 are the same change)."""
    from harness.canvas.patch import diff_graphs

    ops = diff_graphs(_with_config_defaults(parent_graph), _with_config_defaults(graph))["ops"]
    return json.dumps(sorted(json.dumps(op, sort_keys=True) for op in ops))


def _with_config_defaults(graph: dict) -> dict:
    from harness.canvas.node import _with_defaults
    from harness.canvas.registry import for_graph

    registry = for_graph(graph)
    nodes = {}
    for nid, spec in (graph.get("nodes") or {}).items():
        node_type = registry.get(spec.get("type", "")) if isinstance(spec, dict) else None
        if node_type is not None and isinstance(spec.get("config", {}), dict):
            spec = dict(spec, config=_with_defaults(spec.get("config", {}), node_type))
        nodes[nid] = spec
    return dict(graph, nodes=nodes)


def committed_changes(paths: RunPaths) -> list[dict[str, Any]]:
    """Every committed iteration's parent, content hash and change against its parent (`change_of`;
    iteration 0, which has no parent, by its content hash alone)."""
    from harness.rundir.records import committed_iterations
    from harness.rundir.tiers import content_hash

    out = []
    for iteration in committed_iterations(paths):
        candidate = paths.iteration(iteration) / "candidate"
        if iteration == 0:
            out.append({"iteration": 0, "parent": None, "hash": content_hash(candidate), "change": None})
            continue
        meta, _ = read_proposal(paths.iteration(iteration) / "proposal.md")
        parent = meta.get("parent")
        entry = {"iteration": iteration, "parent": parent, "hash": content_hash(candidate), "change": None}
        if isinstance(parent, int):
            entry["change"] = change_of(paths.iteration(parent) / "candidate", candidate)
        out.append(entry)
    return out


def change_of(parent_dir: Path, child_dir: Path) -> str | None:
    """The change parent -> child as canonical text, file by file: graph.json as its
    normalised patch, another JSON file (e.g. LIBERO's programs/*.json) as its JSON
    Patch operations, any other file as its removed and added lines; op and line
    order ignored. The same edit made on two parents gives the same text. None:
    nothing changed, or a file could not be read."""
    import difflib

    import jsonpatch

    from harness.rundir.whitelist import candidate_files

    before, after = candidate_files(parent_dir), candidate_files(child_dir)
    changes = {}
    try:
        for rel in sorted(set(before) | set(after)):
            old, new = before.get(rel), after.get(rel)
            if old == new:
                continue
            if rel == "graph.json" and old is not None and new is not None:
                changes[rel] = normalised_patch(json.loads(old), json.loads(new))
            elif rel.endswith(".json") and old is not None and new is not None:
                ops = jsonpatch.make_patch(json.loads(old), json.loads(new)).patch
                changes[rel] = sorted(json.dumps(op, sort_keys=True) for op in ops)
            else:
                lines = difflib.ndiff((old or b"").decode().splitlines(), (new or b"").decode().splitlines())
                changes[rel] = sorted(line for line in lines if line[:2] in ("- ", "+ "))
    except (ValueError, UnicodeDecodeError):
        return None
    return json.dumps(changes, sort_keys=True) if changes else None


def content_duplicates(paths: RunPaths, staging: Path,
                       parent: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """(duplicates, same change on another parent, what was compared: "content hash", "patch").

    A duplicate: a committed iteration whose candidate equals the staged one
    (same content hash; iteration 0 included), or which made the same change
    (`change_of`) on the same parent. The same change made on a different parent
    is a combination with what that parent holds, not a duplicate: it is listed
    apart. While the staged candidate is still its parent's (not implemented yet)
    nothing is compared; "patch" only when its change could be read."""
    from harness.rundir.tiers import content_hash

    parent_dir, child_dir = paths.iteration(parent) / "candidate", staging / "candidate"
    own_hash = content_hash(child_dir)
    if own_hash == content_hash(parent_dir):
        return [], [], []
    own_change = change_of(parent_dir, child_dir)
    matches, elsewhere = [], []
    for change in committed_changes(paths):
        if change["hash"] == own_hash:
            matches.append({"iteration": change["iteration"], "status": "committed", "by": "content hash"})
        elif own_change is not None and change["change"] == own_change:
            if change["parent"] == parent:
                matches.append({"iteration": change["iteration"], "status": "committed", "by": "same patch"})
            else:
                elsewhere.append({"iteration": change["iteration"], "parent": change["parent"]})
    return matches, elsewhere, ["content hash"] + (["patch"] if own_change is not None else [])


def staged_parent(staging: Path, meta: dict[str, Any]) -> int | None:
    """The parent STAGING was staged on (stage.json, which `commit` records), else proposal.md's."""
    stage_file = staging / "stage.json"
    recorded = read_json(stage_file, "stage record").get("parent") if stage_file.is_file() else None
    if isinstance(recorded, int):
        return recorded
    return meta.get("parent") if isinstance(meta.get("parent"), int) else None


def check_duplicate(paths: RunPaths, staging: Path) -> dict[str, Any]:
    """Compare the staged attempt with earlier ones: its description (whitespace-
    normalised) always; once implemented (its candidate differs from the staged
    parent's), also its content hash and its change against that parent
    (`content_duplicates`). `compared` lists what was compared, `not_compared`
    says why the rest was not. Every distinct duplicate proposal (description and
    candidate content) counts one resample, also after `stage --replace`;
    checking the same one again does not."""
    meta, _ = read_proposal(staging / "proposal.md")
    if not meta.get("description"):
        raise UserError(f"{staging / 'proposal.md'}: missing, or no 'description' in its front matter")
    matches = [dict(m, by="description") for m in find_duplicates(meta["description"], previous_modifications(paths))]
    # Unique per (iteration, description): the ledger and the committed folder name the same attempt.
    unique = {(m["iteration"], m["status"]): m for m in matches}
    parent = staged_parent(staging, meta)
    compared_content, elsewhere = [], []
    if parent is not None:
        by_content, elsewhere, compared_content = content_duplicates(paths, staging, parent)
        for m in by_content:
            unique.setdefault((m["iteration"], m["status"]), m)
    # Outside the staging folder, so `stage --replace` (restoring the parent's files) keeps the count;
    # keyed by the attempt number, so the next attempt at the same iteration starts afresh.
    counter_path = paths.staging / f".aflow-duplicates-attempt{len(read_rows(paths.ledger))}.json"
    hits = read_json(counter_path, "duplicate counter") if counter_path.is_file() else []
    if unique:
        from harness.rundir.tiers import content_hash

        key = normalise(meta["description"]) + " | " + content_hash(staging / "candidate")
        if key not in hits:  # checking the same unchanged proposal again is not another resample
            hits.append(key)
            write_json_atomic(counter_path, hits)
    duplicate = bool(unique)
    out = {
        "duplicate": duplicate,
        "matches": list(unique.values()),
        "parent": parent,
        "compared": ["description"] + compared_content,
        "same_change_as": [e["iteration"] for e in elsewhere],
        "resamples_used": len(hits),
        "max_resamples": MAX_RESAMPLES,
        "resample": duplicate and len(hits) <= MAX_RESAMPLES,
        "give_up": duplicate and len(hits) > MAX_RESAMPLES,
    }
    if parent is None:
        out["not_compared"] = "content hash and patch: the staging folder records no parent (stage.json)"
    elif not compared_content:
        out["not_compared"] = (f"content hash and patch: the candidate is still its parent's (iteration {parent}); "
                               "they are compared once it is implemented")
    elif "patch" not in compared_content:
        out["not_compared"] = ("patch: the change against the parent could not be read (a JSON file that does "
                               "not parse, or a file that is not UTF-8 text)")
    if isinstance(meta.get("parent"), int) and parent is not None and meta["parent"] != parent:
        out["warning"] = (f"proposal.md names parent {meta['parent']}, but {staging.name} was staged on parent "
                          f"{parent}: compared against {parent}, which commit records too")
    if elsewhere:
        out["allowed"] = "different parent: " + "; ".join(
            f"the same change as iteration {e['iteration']} (made on parent {e['parent']}), here on parent "
            f"{parent}, is a combination with what this parent holds, not a duplicate" for e in elsewhere)
    return out


# --------------------------------------------------------------------------- convergence


def converged(paths: RunPaths, top: int = 3, patience: int = 5) -> dict[str, Any]:
    """AFlow's stop rule: the mean of the top-3 scores unchanged for `patience` rounds.

    The top-3 mean exists only once three iterations are scored (iteration 0
    included); before that nothing is computed and the run has not converged."""
    scores = run_scores_percent(paths)
    order = sorted(scores)
    history = []
    for i in range(top - 1, len(order)):
        best = sorted((scores[it] for it in order[: i + 1]), reverse=True)[:top]
        history.append(round(float(np.mean(best)), 6))
    unchanged = 0
    for prev, cur in zip(history, history[1:]):
        unchanged = unchanged + 1 if cur == prev else 0
    result = {"converged": unchanged >= patience, "unchanged_rounds": unchanged, "top_mean_history": history,
              "scored_iterations": len(order)}
    if len(order) < top:
        result["note"] = f"fewer than {top} scored iterations: no top-{top} mean yet"
    return result

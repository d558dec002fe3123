"""KDLoop helpers: memory files, spec validation, picking the best slot, REFLECT triggers.

Memory lives in runs/<id>/memory/: `knowledge.md` and `search_space.md`
(Markdown, appended and pruned line by line; rows appended to a table stay in
it), `hypotheses.jsonl` (one schema-validated JSON object a line, updated by
id) and `experience.jsonl` (likewise, written by `pick_best`), plus
`events.jsonl`, the loop's own bookkeeping of THINK and REFLECT events that the
REFLECT triggers are computed from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.fileio import parse_json, read_json, read_jsonl, write_text_atomic
from harness.rundir.layout import RunPaths
from harness.rundir.ledger import BEST_RULE, VERDICT_RANK, read_rows
from harness.rundir.records import read_iteration_metrics, read_metrics, read_record
from harness.schemas import validate_instance
from harness.variants.fitness import (
    committed_rows,
    committed_scores,
    primary_mean,
    staging_iteration,
)
from harness.rundir.proposal import AXES

MAX_SPECS = 3
HEARTBEAT = 3
SAME_AXIS_STREAK = 3

MEMORY_FILES = {
    "knowledge": "knowledge.md",
    "hypotheses": "hypotheses.jsonl",
    "experience": "experience.jsonl",
    "search_space": "search_space.md",
}
ROW_SCHEMAS = {"hypotheses": "kdloop_hypothesis", "experience": "kdloop_experience"}
EVENTS = "events.jsonl"


def _initial_text(name: str) -> str:
    if name == "knowledge":
        return "# Knowledge\n\nLessons distilled from experiments, one per line.\n\n"
    if name == "search_space":
        rows = "\n".join(f"| {axis} | untried | |" for axis in AXES)
        return (
            "# Search space\n\nCoverage of the intervention axes; REFLECT audits and appends here.\n\n"
            "| axis | status | notes |\n|---|---|---|\n" + rows + "\n"
        )
    return ""


def memory_path(paths: RunPaths, name: str) -> Path:
    if name not in MEMORY_FILES:
        raise UserError(f"unknown memory file {name!r}: choose one of {', '.join(MEMORY_FILES)}")
    return paths.memory / MEMORY_FILES[name]


def init_memory(paths: RunPaths) -> dict[str, str]:
    """Create the memory files that are missing; never touches existing ones."""
    created = {}
    for name in MEMORY_FILES:
        path = memory_path(paths, name)
        if not path.exists():
            write_text_atomic(path, _initial_text(name))
            created[name] = str(path)
    events = paths.memory / EVENTS
    if not events.exists():
        write_text_atomic(events, "")
    (paths.memory / "specs").mkdir(exist_ok=True)  # THINK writes specs/<iteration>.json here
    return created


def _lines(path: Path) -> list[str]:
    if not path.is_file():
        raise UserError(f"{path}: missing (run `architect kdloop init RUN` first)")
    return path.read_text(encoding="utf-8").splitlines()


def append(paths: RunPaths, name: str, text: str) -> dict[str, Any]:
    """Append Markdown text, or one JSON row (validated) to a JSONL memory file."""
    path = memory_path(paths, name)
    lines = _lines(path)
    if name in ROW_SCHEMAS:
        new = [_validated_row(name, text)]
        if name == "hypotheses":
            _check_new_hypothesis(lines, new[0], path)
        lines = lines + new
    else:
        if not text.strip():
            raise UserError(f"append to {name}: empty text")
        new = text.strip("\n").splitlines()
        lines = _markdown_append(lines, new, path)
    write_text_atomic(path, "\n".join(lines) + "\n")
    return {"file": str(path), "appended_lines": len(new), "lines": len(lines)}


def _is_row(line: str) -> bool:
    return line.lstrip().startswith("|")


def _cells(line: str) -> int:
    return len(line.strip().strip("|").split("|"))


def _markdown_append(lines: list[str], new: list[str], path: Path) -> list[str]:
    """Table rows (every new line starts with `|`) go right below the file's
    last table, with no blank line between (one would end the table), and must
    have its column count; other text is appended, after a blank line when
    the file ends in a table row (else it would read as one more row)."""
    tables = [i for i, line in enumerate(lines) if _is_row(line)]
    if tables and all(_is_row(line) for line in new):
        end = tables[-1]
        start = end
        while start > 0 and _is_row(lines[start - 1]):
            start -= 1
        columns = _cells(lines[start])
        bad = [line for line in new if _cells(line) != columns]
        if bad:
            raise UserError(f"append to {path}: row {bad[0]!r} has {_cells(bad[0])} cells, the table has {columns}")
        return lines[:end + 1] + new + lines[end + 1:]
    return lines + ([""] if lines and _is_row(lines[-1]) else []) + new


def _check_new_hypothesis(lines: list[str], row: str, path: Path) -> None:
    new_id = json.loads(row)["id"]
    if any(json.loads(line).get("id") == new_id for line in lines if line.strip()):
        raise UserError(f"append to {path}: hypothesis {new_id!r} already exists; change it with "
                        f"`architect kdloop hypothesis update RUN {new_id} ...`")


HYPOTHESIS_FIELDS = ("statement", "axes", "status", "iteration", "evidence")


def update_hypothesis(paths: RunPaths, hypothesis_id: str, changes: dict[str, Any]) -> dict[str, Any]:
    """Set fields of the hypothesis with this id (validated; all or nothing)."""
    path = memory_path(paths, "hypotheses")
    rows = [json.loads(line) for line in _lines(path) if line.strip()]
    found = [r for r in rows if r.get("id") == hypothesis_id]
    if not found:
        known = ", ".join(r.get("id", "?") for r in rows) or "none"
        raise UserError(f"hypothesis update: no hypothesis {hypothesis_id!r} in {path} (ids: {known})")
    changes = {k: v for k, v in changes.items() if v is not None}
    if not changes:
        raise UserError(f"hypothesis update {hypothesis_id}: nothing to change: give at least one of "
                        + ", ".join(f"--{f}" for f in HYPOTHESIS_FIELDS))
    before = dict(found[0])
    updated = dict(before, **changes)
    errors = validate_instance(ROW_SCHEMAS["hypotheses"], updated)
    if errors:
        raise UserError(f"hypothesis update {hypothesis_id}: does not match "
                        f"schemas/{ROW_SCHEMAS['hypotheses']}.schema.json: " + "; ".join(errors))
    rows = [updated if r is found[0] else r for r in rows]
    write_text_atomic(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    return {"file": str(path), "id": hypothesis_id, "before": before, "after": updated}


def _validated_row(name: str, text: str) -> str:
    row = parse_json(text, f"append to {name}", "row")
    errors = validate_instance(ROW_SCHEMAS[name], row)
    if errors:
        raise UserError(f"append to {name}: row does not match schemas/{ROW_SCHEMAS[name]}.schema.json: "
                        + "; ".join(errors))
    return json.dumps(row, sort_keys=True)


def delete_lines(paths: RunPaths, name: str, numbers: list[int]) -> dict[str, Any]:
    """Delete lines by 1-based number (all or nothing)."""
    path = memory_path(paths, name)
    lines = _lines(path)
    bad = [n for n in numbers if not 1 <= n <= len(lines)]
    if bad:
        raise UserError(f"delete from {path}: no line {bad[0]} (the file has {len(lines)} lines)")
    drop = set(numbers)
    kept = [line for i, line in enumerate(lines, start=1) if i not in drop]
    removed = [lines[n - 1] for n in sorted(drop)]
    write_text_atomic(path, "\n".join(kept) + ("\n" if kept else ""))
    return {"file": str(path), "deleted": removed, "lines": len(kept)}


def show(paths: RunPaths, name: str) -> list[str]:
    return [f"{i:4d}  {line}" for i, line in enumerate(_lines(memory_path(paths, name)), start=1)]


# --------------------------------------------------------------------------- events


def events(paths: RunPaths) -> list[dict[str, Any]]:
    return read_jsonl(paths.memory / EVENTS)


def record_event(paths: RunPaths, event: dict[str, Any]) -> None:
    path = paths.memory / EVENTS
    existing = path.read_text(encoding="utf-8") if path.is_file() else ""
    write_text_atomic(path, existing + json.dumps(event, sort_keys=True) + "\n")


# --------------------------------------------------------------------------- specs


def load_specs(path: Path) -> dict[str, Any]:
    doc = read_record("specs", path)
    ids = [s["id"] for s in doc["specs"]]
    if len(set(ids)) != len(ids):
        raise UserError(f"{path}: spec ids must be unique, got {ids}")
    return doc


def check_near_misses(paths: RunPaths, doc: dict[str, Any], where: Path) -> None:
    """A `stack_near_miss` spec must name an evaluated experiment that scored
    above its parent without a `better` verdict (a near-miss)."""
    rows = read_jsonl(memory_path(paths, "experience")) if memory_path(paths, "experience").is_file() else []
    for spec in doc["specs"]:
        ref = spec.get("stack_near_miss")
        if not ref:
            continue
        found = [r for r in rows if r["iteration"] == ref["iteration"] and r["slot"] == ref["slot"]]
        if not found:
            raise UserError(f"{where}: spec {spec['id']!r}: stack_near_miss names iteration {ref['iteration']} "
                            f"slot {ref['slot']!r}, which experience.jsonl does not have")
        row = found[-1]
        if (row.get("delta") or 0) <= 0 or row.get("verdict") == "better":
            raise UserError(f"{where}: spec {spec['id']!r}: iteration {ref['iteration']} slot {ref['slot']!r} is not a "
                            f"near-miss (delta {row.get('delta')}, verdict {row.get('verdict')}): only a higher but "
                            "indistinguishable result may be stacked again")


def register_specs(paths: RunPaths, path: Path, stage: str) -> dict[str, Any]:
    """Validate THINK's (or CRITIC's) specs.json and log the event; empty THINK is recorded."""
    doc = load_specs(path)
    settle_outcomes(paths)
    check_near_misses(paths, doc, path)
    record_event(paths, {"event": stage, "iteration": doc["iteration"], "specs": len(doc["specs"]),
                         "axes": sorted({a for s in doc["specs"] for a in s["axes"]})})
    return {
        "iteration": doc["iteration"],
        "parent": doc["parent"],
        "specs": len(doc["specs"]),
        "empty": not doc["specs"],
        "slots": {str(i): s["id"] for i, s in enumerate(doc["specs"], start=1)},
    }


# --------------------------------------------------------------------------- experiment


EDIT_FILE = "edit.json"


def materialize(paths: RunPaths, specs_path: Path, staging: Path) -> dict[str, Any]:
    """Write the slot's proposal.md (description, axes, parent, hypothesis and
    change as the body) from its spec, and its structured patch to edit.json
    when the spec has one (apply it with `architect patch`)."""
    from harness.rundir import proposal

    doc = load_specs(specs_path)
    _, spec = _slot_spec(doc, staging, specs_path)
    stage_meta = read_json(staging / "stage.json", "stage record")
    if stage_meta.get("parent") != doc["parent"]:
        raise UserError(f"{staging}: staged on parent {stage_meta.get('parent')}, the specs' parent is "
                        f"{doc['parent']}: stage again with --parent {doc['parent']}")
    meta = {"description": spec["description"], "axes": list(spec["axes"]), "parent": doc["parent"]}
    if spec.get("hypothesis_id"):
        meta["hypothesis_id"] = spec["hypothesis_id"]
    body = f"\n## Hypothesis\n\n{spec['hypothesis']}\n"
    if spec.get("change"):
        body += f"\n## Change\n\n{spec['change']}\n"
    if spec.get("stack_near_miss"):
        ref = spec["stack_near_miss"]
        body += f"\n## Stacked near-miss\n\nRe-tests iteration {ref['iteration']} slot {ref['slot']} on a new parent.\n"
    proposal.write(staging / "proposal.md", meta, body)
    out = {"staging": str(staging), "spec_id": spec["id"], "proposal": str(staging / "proposal.md"), "edit": None}
    if spec.get("patch") is not None:
        patch = spec["patch"] if isinstance(spec["patch"], dict) else {"ops": spec["patch"]}
        write_text_atomic(staging / EDIT_FILE, json.dumps(patch, indent=1) + "\n")
        out["edit"] = str(staging / EDIT_FILE)
    return out


def _slot_spec(doc: dict, staging: Path, specs_path: Path) -> tuple[str, dict[str, Any]]:
    """(slot, spec) of the slot staged in `staging` (`<iteration>-<k>`: the k-th spec),
    checked to belong to the specs' iteration."""
    slot = staging.name.split("-", 1)[1] if "-" in staging.name else ""
    if not slot.isdigit() or not 1 <= int(slot) <= len(doc["specs"]):
        raise UserError(f"{staging}: slot {slot!r} matches no spec in {specs_path} "
                        f"(slots are 1..{len(doc['specs'])}, from `architect stage --slot k`)")
    if staging_iteration(staging) != doc["iteration"]:
        raise UserError(f"{staging}: belongs to iteration {staging_iteration(staging)}, "
                        f"specs are for iteration {doc['iteration']}")
    return slot, doc["specs"][int(slot) - 1]


def _slot_rank(result: dict[str, Any]) -> tuple:
    """ledger.BEST_RULE for slots: paired verdict against the parent, then mean, then slot number."""
    verdict = (result["vs_parent"] or {}).get("verdict")
    return -VERDICT_RANK.get(verdict, 1), -result["score"], int(result["slot"])


def pick_best(paths: RunPaths, specs_path: Path, stagings: list[Path]) -> dict[str, Any]:
    """Score each slot, choose the best evaluated one by ledger.BEST_RULE (a
    slot the paired test calls better than the parent outranks a higher mean
    it calls indistinguishable), and give each slot's paired verdict against
    the parent and the best's against the runner-up (indistinguishable: a
    near-tie, reported as one). Evaluated slots are appended to
    experience.jsonl, the best as `picked` until its commit succeeds
    (`settle_outcomes`); failed ones enter no memory."""
    from harness.evaluation.behaviour import note
    from harness.evaluation.compare import verdict_summary

    doc = load_specs(specs_path)
    settle_outcomes(paths)
    parent = doc["parent"]
    parent_score = committed_scores(paths).get(parent)
    parent_metrics = read_iteration_metrics(paths, parent)
    results = []
    for staging in stagings:
        slot, spec = _slot_spec(doc, staging, specs_path)
        score, reason = _slot_score(staging)
        vs_parent = None
        if score is not None and parent_metrics is not None:
            vs_parent = verdict_summary(parent_metrics, _metrics(staging))
        results.append({"staging": str(staging), "slot": slot, "spec": spec, "score": score, "reason": reason,
                        "vs_parent": vs_parent})
    evaluated = sorted((r for r in results if r["score"] is not None), key=_slot_rank)
    best = evaluated[0] if evaluated else None
    same = None
    if best is not None and parent_metrics is not None:
        from harness.evaluation.behaviour import same_behaviour

        same = same_behaviour(parent_metrics, paths.iteration(parent) / "eval", _metrics(Path(best["staging"])),
                              Path(best["staging"]) / "eval")
    vs_runner_up = None
    if len(evaluated) > 1:
        vs_runner_up = dict(verdict_summary(_metrics(Path(evaluated[1]["staging"])), _metrics(Path(best["staging"]))),
                            runner_up=evaluated[1]["staging"], runner_up_slot=evaluated[1]["slot"])

    # A resumed loop may pick the same slots twice; a skipped iteration's number
    # is reused by fresh slots, told apart by when they were staged.
    already = {(row["iteration"], row["slot"], row.get("staged"), row["spec_id"])
               for row in read_jsonl(memory_path(paths, "experience"))}
    for r in results:
        outcome = "failed" if r["score"] is None else ("picked" if r is best else "evaluated")
        r["outcome"] = outcome
        staged = _staged_at(Path(r["staging"]))
        if outcome == "failed" or (doc["iteration"], r["slot"], staged, r["spec"]["id"]) in already:
            continue
        row = {
            "iteration": doc["iteration"], "slot": r["slot"], "parent": parent,
            "spec_id": r["spec"]["id"], "axes": r["spec"]["axes"], "description": r["spec"]["description"],
            "hypothesis_id": r["spec"].get("hypothesis_id"), "outcome": outcome, "score": r["score"],
            "parent_score": parent_score,
            "delta": None if r["score"] is None or parent_score is None else r["score"] - parent_score,
            "reason": r["reason"], "staged": staged,
            "verdict": r["vs_parent"]["verdict"] if r["vs_parent"] else None,
            "p_value": r["vs_parent"]["p_value"] if r["vs_parent"] else None,
        }
        append(paths, "experience", json.dumps(row))
    return {
        "iteration": doc["iteration"],
        "parent": parent,
        "parent_score": parent_score,
        "rule": BEST_RULE,
        "best": best["staging"] if best else None,
        "best_description": best["spec"]["description"] if best else None,
        "best_vs_parent": best["vs_parent"] if best else None,
        "vs_runner_up": vs_runner_up,
        "near_tie": bool(vs_runner_up and vs_runner_up["verdict"] == "indistinguishable"),
        "best_identical_to_parent": same,
        "warning": (note(same, parent) or None) if same else None,
        "discard": [r["staging"] for r in results if r is not best],
        "slots": [{k: r[k] for k in ("staging", "slot", "score", "outcome", "reason", "vs_parent")}
                  | {"spec_id": r["spec"]["id"]} for r in results],
    }


def settle_outcomes(paths: RunPaths) -> int:
    """Rewrite `picked` experience rows once the ledger tells: `committed` when
    that slot's commit succeeded, `evaluated` when another slot (or nothing) of
    its iteration was committed or it was discarded. Returns rows changed."""
    path = memory_path(paths, "experience")
    if not path.is_file():
        return 0
    rows = read_jsonl(path)
    ledger_rows = read_rows(paths.ledger)
    changed = 0
    for row in rows:
        if row.get("outcome") != "picked":
            continue
        ended = [r for r in ledger_rows
                 if r["iteration"] == row["iteration"] and r["time"] >= (row.get("staged") or "")]
        if any(r["status"] == "committed" and str(r.get("slot")) == row["slot"] for r in ended):
            row["outcome"] = "committed"
        elif any(r["status"] == "committed" or str(r.get("slot")) == row["slot"] for r in ended):
            row["outcome"] = "evaluated"
        else:
            continue
        changed += 1
    if changed:
        write_text_atomic(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    return changed


def _metrics(staging: Path) -> dict[str, Any]:
    return read_metrics(staging / "eval" / "metrics.json")


def slot_concurrency(slots: int, episodes: int, cores: int) -> int:
    """How many slot evaluations may run at once: each already spreads its
    episodes over min(cores, episodes) worker processes, so run more only
    while the cores are not all busy."""
    return max(1, min(slots, cores // max(1, min(cores, episodes))))


def evaluate_slots(run, stagings: list[Path]) -> dict[str, Any]:
    """Performance-tier evaluation of several slots under one run lock (a
    second `architect evaluate` on the same run would find it busy)."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    from executors import load_executor

    tier, override = run.tier("eval")
    episodes = override or len(load_executor(run.manifest["executor"]).episodes(tier))
    cores = os.cpu_count() or 1
    workers = slot_concurrency(len(stagings), episodes, cores)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        verdicts = list(pool.map(lambda folder: run.evaluate_staging(folder, "eval", progress=True), stagings))
    per_slot = max(1, min(cores, episodes))
    if workers >= len(stagings):
        why = f"all {len(stagings)} slot(s) at once: {cores} cores, {per_slot} worker process(es) per slot"
    else:
        why = (f"{workers} slot(s) at a time: each evaluation already spreads its {episodes} episodes over "
               f"{per_slot} worker process(es) and this machine has {cores} core(s)")
    return {
        "concurrent": workers,
        "why": why,
        "episodes": episodes,
        "slots": [{"staging": str(folder), "passed": bool(v.get("passed")), "reasons": v.get("reasons") or [],
                   **{k: v.get(k) for k in ("complete", "infra_failures", "agent_errors", "cached_episodes")},
                   "primary": v.get("primary")} for folder, v in zip(stagings, verdicts)],
    }


def _staged_at(staging: Path) -> str | None:
    try:
        return read_json(staging / "stage.json", "stage record").get("created")
    except (OSError, ValueError):
        return None


def _slot_score(staging: Path) -> tuple[float | None, str | None]:
    metrics_path = staging / "eval" / "metrics.json"
    verdict_path = staging / "eval" / "verdict.json"
    if verdict_path.is_file():
        verdict = read_json(verdict_path, "verdict")
        if not verdict.get("passed", True):
            return None, "evaluation failed: " + "; ".join(verdict.get("reasons") or [])
    if metrics_path.is_file():
        metrics = read_json(metrics_path, "metrics")
        if metrics.get("complete") is False:
            return None, "evaluation incomplete"
        score = primary_mean(metrics)
        return (score, None) if score is not None else (None, "no primary score in eval/metrics.json")
    smoke = staging / "smoke" / "metrics.json"
    if smoke.is_file():
        return None, "not evaluated (smoke tier only)"
    return None, "not evaluated (failed check or smoke)"


# --------------------------------------------------------------------------- REFLECT


def reflect_due(paths: RunPaths) -> dict[str, Any]:
    """Which REFLECT triggers fire now: heartbeat, same-axis streak, empty THINK."""
    log = events(paths)
    reflect_positions = [i for i, e in enumerate(log) if e.get("event") == "reflect"]
    last_index = reflect_positions[-1] if reflect_positions else -1
    last_iteration = log[last_index].get("after_iteration", 0) if reflect_positions else 0

    rows = committed_rows(paths)
    done = sorted(it for it in rows if it >= 1)
    since = [it for it in done if it > last_iteration]
    reasons = []
    if len(since) >= HEARTBEAT:
        reasons.append("heartbeat")

    streak_axes: list[str] = []
    if len(done) >= SAME_AXIS_STREAK:
        window = done[-SAME_AXIS_STREAK:]
        shared = set(rows[window[0]].get("axes") or [])
        for it in window[1:]:
            shared &= set(rows[it].get("axes") or [])
        if shared and window[-1] > last_iteration:
            streak_axes = sorted(shared)
            reasons.append("same_axis")

    if any(e.get("event") in ("think", "critic") and e.get("specs") == 0 for e in log[last_index + 1:]):
        reasons.append("empty_think")
    return {
        "due": bool(reasons),
        "reasons": reasons,
        "iterations_since_reflect": len(since),
        "last_reflect_after_iteration": last_iteration,
        "streak_axes": streak_axes,
    }


def record_reflect(paths: RunPaths, note: str | None) -> dict[str, Any]:
    due = reflect_due(paths)
    done = [it for it in committed_rows(paths) if it >= 1]
    event = {"event": "reflect", "after_iteration": max(done, default=0), "reasons": due["reasons"], "note": note}
    record_event(paths, event)
    return event


def coverage(paths: RunPaths) -> dict[str, Any]:
    """Per axis: evaluated experiments, their paired verdicts against the parent
    (`improved` counts only `better`; a higher mean that is indistinguishable is
    a near-tie), best delta."""
    def empty() -> dict[str, Any]:
        return {"experiments": 0, "improved": 0, "worse": 0, "indistinguishable": 0, "best_delta": None}

    table = {axis: empty() for axis in AXES}
    for row in read_jsonl(memory_path(paths, "experience")):
        if row.get("outcome") == "failed":
            continue  # rows written before failed slots were kept out of memory
        for axis in row.get("axes", []):
            cell = table.setdefault(axis, empty())
            cell["experiments"] += 1
            verdict = row.get("verdict")
            if verdict == "better":
                cell["improved"] += 1
            elif verdict in ("worse", "indistinguishable"):
                cell[verdict] += 1
            delta = row.get("delta")
            if delta is not None and (cell["best_delta"] is None or delta > cell["best_delta"]):
                cell["best_delta"] = delta
    untried = [axis for axis, cell in table.items() if cell["experiments"] == 0]
    return {"axes": table, "untried": untried}


def stop(paths: RunPaths, reason: str) -> dict[str, Any]:
    """Ask the loop to stop after the current iteration, saying why."""
    if not reason.strip():
        raise UserError("kdloop stop: --reason must not be empty")
    write_text_atomic(paths.stop_file, f"kdloop: {reason.strip()}\n")
    record_event(paths, {"event": "stop", "reason": reason.strip()})
    return {"stop_file": str(paths.stop_file), "reason": reason.strip()}

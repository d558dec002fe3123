"""`architect check`: everything that can be said about a staged candidate
without running it. Every violation is listed with the file (and JSON pointer)
it concerns."""

from __future__ import annotations

import ast
from pathlib import Path

from harness.models.candidate_checks import candidate_violations
from harness.rundir import proposal, whitelist
from harness.fileio import InputError, decode_text, parse_json, parse_yaml, read_json, write_json_atomic
from harness.rundir.tiers import content_hash
from harness.rundir.run import Run
from harness.pysource import serialised


def parse_violations(files: dict[str, bytes]) -> list[dict]:
    out = []
    for path, content in files.items():
        if path.endswith(".json"):
            try:
                parse_json(content, path, "JSON file")
            except InputError as exc:
                where = path + (f":{exc.line}" if exc.line else "") + (f":{exc.column}" if exc.line and exc.column else "")
                out.append({"code": "json_parse", "path": where, "message": exc.message, "hint": None})
        elif path.endswith((".yaml", ".yml")):
            try:
                parse_yaml(content, path, "YAML file")
            except InputError as exc:
                where = path + (f":{exc.line}" if exc.line else "")
                out.append({"code": "yaml_parse", "path": where, "message": exc.message, "hint": None})
        elif path.endswith(".py"):
            try:
                serialised(ast.parse, decode_text(content, path, "Python file"), filename=path)
            except InputError as exc:
                out.append({"code": "python_parse", "path": path, "message": exc.message, "hint": None})
            except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
                line = getattr(exc, "lineno", None)
                where = f"{path}:{line}" if line else path
                message = getattr(exc, "msg", None) or f"cannot be parsed: {type(exc).__name__}"
                out.append({"code": "python_parse", "path": where, "message": f"{where}: {message}", "hint": None})
    return out


def graph_violations(candidate: Path) -> list[dict]:
    from harness.canvas.validate import validate_graph

    graph_file = candidate / "graph.json"
    if not graph_file.is_file():
        return [{"code": "missing_graph", "path": "graph.json", "message": "the candidate has no graph.json", "hint": None}]
    try:
        graph = read_json(graph_file, "graph")
    except InputError:
        return []  # already reported as a parse violation
    out = []
    try:
        problems = validate_graph(graph, candidate_dir=candidate)
    except Exception as exc:  # fail closed: what cannot be validated is not committed
        return [{"code": "validator_error", "path": "graph.json",
                 "message": f"graph.json: static validation crashed: {type(exc).__name__}: {exc}",
                 "hint": "a harness bug or a graph shape the validator does not handle; simplify the edit"}]
    for problem in problems:
        if problem.severity != "error":
            continue
        item = problem.to_dict()
        where = "graph.json" + (f"#{problem.path}" if problem.path else "")
        subject = problem.node or problem.cell or ""
        out.append({
            "code": problem.code,
            "path": where,
            "message": f"{where}: {subject + ': ' if subject else ''}{problem.message}",
            "hint": item.get("hint"),
        })
    return out


def model_profile_violations(parent: Path, child: Path, parent_files: dict, child_files: dict) -> list[dict]:
    def profile(folder: Path):
        try:
            return read_json(folder / "graph.json", "graph").get("model_profile")
        except (OSError, ValueError, AttributeError):
            return None

    before, after = profile(parent), profile(child)
    out = []
    if before != after:
        out.append({
            "code": "model_profile",
            "path": "graph.json#/model_profile",
            "message": f"graph.json#/model_profile: the pinned model profile changed from {before!r} to {after!r}",
            "hint": "the model profile is pinned for the whole run; restore it",
        })
    elif isinstance(before, dict) and isinstance(before.get("path"), str):
        rel = before["path"]
        if rel in parent_files and parent_files.get(rel) != child_files.get(rel):
            out.append({"code": "model_profile", "path": rel, "message": f"{rel}: the pinned model profile file was edited",
                        "hint": "the model profile is pinned for the whole run; restore it"})
    return out


def no_op_violations(parent: Path, child: Path) -> list[dict]:
    """A candidate that behaves as its parent is not an attempt: the same content
    hash, or the same live graph up to node ids and nodes that reach no simulator
    input (harness.canvas.equivalence) with every other file unchanged."""
    if not (child / "graph.json").is_file():
        return []
    if content_hash(child) == content_hash(parent):
        kind = "identical to its parent (same content hash): nothing was changed"
    else:
        kind = behaviour_no_op(parent, child)
        if kind is None:
            return []
    return [{"code": "no_op", "path": "candidate/", "message": f"candidate/: {kind}",
             "hint": "implement the proposal (a patch, a config value, a node type) before checking"}]


def behaviour_no_op(parent: Path, child: Path) -> str | None:
    """What kind of behaviour-identical copy `child` is, or None when it may behave differently."""
    from harness.canvas import equivalence
    from harness.canvas.graph import GRAPH_FILE

    a_files, b_files = whitelist.candidate_files(parent), whitelist.candidate_files(child)
    a_files.pop(GRAPH_FILE, None)
    b_files.pop(GRAPH_FILE, None)
    if a_files != b_files:
        return None
    try:
        graphs = [read_json(folder / "graph.json", "graph") for folder in (parent, child)]
        parent_live, child_live = (equivalence.live_graph(g, _simulators(g, folder))
                                   for g, folder in zip(graphs, (parent, child)))
    except Exception:  # a graph that does not load is reported by the other checks
        return None
    result = equivalence.compare(parent_live, child_live)
    if not result.same:
        return None
    kinds = []
    if result.renamed:
        kinds.append("renamed node ids (" + ", ".join(f"{a} → {b}" for a, b in result.renamed.items()) + ")")
    added = sorted(set(result.dead_child) - set(result.dead_parent))
    removed = sorted(set(result.dead_parent) - set(result.dead_child))
    if added:
        kinds.append(f"added node(s) that reach no simulator input ({', '.join(added)})")
    if removed:
        kinds.append(f"removed node(s) that reached no simulator input ({', '.join(removed)})")
    what = "; ".join(kinds) or "changed only names, descriptions, docs, order or nodes that reach no simulator input"
    return f"behaves exactly as its parent (the same live graph): {what}"


def _simulators(graph: dict, candidate: Path) -> set[str]:
    from harness.canvas.registry import for_graph

    registry = for_graph(graph, candidate)
    out = set()
    for nid, spec in (graph.get("nodes") or {}).items():
        nt = registry.get(spec.get("type")) if isinstance(spec, dict) else None
        if nt is not None and nt.is_simulator:
            out.add(nid)
    return out


def check_candidate(run: Run, staging: Path) -> list[dict]:
    meta = run.staging_meta(staging)
    parent_dir = run.paths.iteration(meta["parent"]) / "candidate"
    child_dir = staging / "candidate"
    parent_files = whitelist.candidate_files(parent_dir)
    child_files = whitelist.candidate_files(child_dir)
    violations = whitelist.violations(parent_files, child_files, run.manifest["profiles"]["whitelist"])
    violations += no_op_violations(parent_dir, child_dir)
    violations += parse_violations(child_files)
    violations += graph_violations(child_dir)
    violations += model_profile_violations(parent_dir, child_dir, parent_files, child_files)
    violations += candidate_violations(child_dir)
    violations += proposal.problems(staging / "proposal.md")
    return violations


def check_seed(candidate: Path, out: Path) -> dict:
    """Iteration 0's check.json: the same checks minus the comparison with a parent."""
    files = whitelist.candidate_files(candidate)
    violations = parse_violations(files) + graph_violations(candidate) + candidate_violations(candidate)
    result = {"ok": not violations, "candidate_hash": content_hash(candidate), "violations": violations}
    write_json_atomic(out, result)
    return result


def run_check(run: Run, staging: Path) -> dict:
    """Check the staged candidate and record the verdict with its content hash."""
    violations = check_candidate(run, staging)
    result = {"ok": not violations, "candidate_hash": content_hash(staging / "candidate"), "violations": violations}
    write_json_atomic(staging / "check.json", result)
    return result

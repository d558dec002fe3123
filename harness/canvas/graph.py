"""Graph files: loading with precise JSON errors, schema checks, composite flattening."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.fileio import InputError, parse_json, read_json
from harness.schemas import validate_instance

COMPOSITE_TYPE = "composite"
GRAPH_FILE = "graph.json"


class GraphLoadError(InputError):
    """A graph file that cannot be read, parsed, or (if asked) fails its schema."""


class CompositeError(ValueError):
    """A composite that cannot be inlined (unknown, recursive, bad exposed port)."""


def resolve_graph_path(path: str | Path) -> Path:
    """A graph.json path, or a candidate folder holding one."""
    p = Path(path)
    return p / GRAPH_FILE if p.is_dir() else p


def parse_json_text(text: str | bytes, source: str, what: str = "graph") -> Any:
    """The hardened JSON parser (`harness.fileio.parse_json`), raising GraphLoadError."""
    return parse_json(text, source, what, GraphLoadError)


def read_json_file(path: str | Path, what: str = "graph") -> Any:
    p = Path(path)
    if p.is_dir():
        raise GraphLoadError(f"{p}: is a folder without a {GRAPH_FILE}", path=str(p))
    return read_json(p, what, GraphLoadError)


def load_graph(path: str | Path, *, schema: bool = False) -> dict:
    """Parse a graph file (or a folder holding graph.json).

    Raises GraphLoadError for unreadable files, malformed JSON (with line and
    column) and non-object documents; with `schema=True` also for schema
    violations (all of them, in `details`). Semantic checks are `validate_graph`'s job.
    """
    p = resolve_graph_path(path)
    graph = read_json_file(p)
    if not isinstance(graph, dict):
        raise GraphLoadError(f"{p}: a graph must be a JSON object, got {type(graph).__name__}", path=str(p))
    if schema:
        errors = validate_instance("graph", graph)
        if errors:
            raise GraphLoadError(f"{p}: graph violates schemas/graph.schema.json: {errors[0]}"
                                 + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
                                 path=str(p), details=errors)
    return graph


@lru_cache(maxsize=16384)
def split_endpoint(endpoint: str) -> tuple[str, str]:
    """"node.port" -> ("node", "port"); port "" when there is no dot."""
    node, dot, port = endpoint.rpartition(".")
    return (node, port) if dot else (endpoint, "")


@dataclass
class FlattenIssue:
    code: str
    message: str
    path: str
    node: str | None = None
    port: str | None = None
    hint: str = ""


@dataclass
class Flattened:
    graph: dict
    node_paths: dict[str, str]      # flat node id -> JSON pointer in the original
    edge_paths: list[str]           # per flat edge -> JSON pointer of the edge it came from
    issues: list[FlattenIssue]


def _as_dict(x) -> dict:
    return x if isinstance(x, dict) else {}


def _as_list(x) -> list:
    return x if isinstance(x, list) else []


def flatten_detailed(graph: dict) -> Flattened:
    """Inline composites (ids `outer/inner`), keeping where everything came from."""
    composites = _as_dict(graph.get("composites"))
    nodes = _as_dict(graph.get("nodes"))
    if not composites and not any(isinstance(s, dict) and s.get("type") == COMPOSITE_TYPE for s in nodes.values()):
        return _without_composites(graph, nodes)
    flat_nodes: dict[str, dict] = {}
    node_paths: dict[str, str] = {}
    flat_edges: list[dict] = []
    edge_paths: list[str] = []
    flat_grants: dict[str, dict] = {}
    issues: list[FlattenIssue] = []

    def expand(nodes, edges, grants, prefix: str, ptr: str, stack: tuple):
        inner_levels: dict[str, tuple] = {}  # composite node id -> (composite spec, resolve_in, resolve_out, name)
        for nid, spec in _as_dict(nodes).items():
            spec = _as_dict(spec)
            fid = prefix + nid
            if spec.get("type") == COMPOSITE_TYPE:
                cname = _as_dict(spec.get("config")).get("composite")
                where = f"{ptr}/nodes/{nid}"
                if not isinstance(cname, str) or cname not in composites:
                    issues.append(FlattenIssue(
                        "unknown_composite", f"node {fid!r} refers to composite {cname!r}, which is not defined",
                        where + "/config/composite", node=fid,
                        hint=f"define it under /composites or use one of {sorted(composites)}"))
                    continue
                if cname in stack:
                    issues.append(FlattenIssue(
                        "recursive_composite", f"composite {cname!r} contains itself (via {' -> '.join(stack + (cname,))})",
                        where, node=fid, hint="a composite may not include itself, directly or indirectly"))
                    continue
                comp = _as_dict(composites[cname])
                res_in, res_out = expand(comp.get("nodes"), comp.get("edges"), comp.get("grants"),
                                         fid + "/", f"/composites/{cname}", stack + (cname,))
                inner_levels[nid] = (comp, res_in, res_out, cname)
            else:
                flat_nodes[fid] = spec
                node_paths[fid] = f"{ptr}/nodes/{nid}"
        for gid, grant in _as_dict(grants).items():
            flat_grants[prefix + gid] = grant

        def resolve_in(endpoint: str, where: str) -> list[str]:
            nid, port = split_endpoint(endpoint)
            level = inner_levels.get(nid)
            if level is None:
                return [prefix + endpoint]
            comp, res_in, _res_out, cname = level
            targets = _as_dict(comp.get("inputs")).get(port)
            if targets is None:
                issues.append(FlattenIssue(
                    "unknown_port", f"composite node {prefix + nid!r} ({cname}) has no input {port!r}",
                    where, node=prefix + nid, port=port,
                    hint=f"exposed inputs: {sorted(_as_dict(comp.get('inputs')))}"))
                return []
            out = []
            for target in (targets if isinstance(targets, list) else [targets]):
                if isinstance(target, str):
                    out.extend(res_in(target, f"/composites/{cname}/inputs/{port}"))
            return out

        def resolve_out(endpoint: str, where: str) -> str | None:
            nid, port = split_endpoint(endpoint)
            level = inner_levels.get(nid)
            if level is None:
                return prefix + endpoint
            comp, _res_in, res_out, cname = level
            target = _as_dict(comp.get("outputs")).get(port)
            if not isinstance(target, str):
                issues.append(FlattenIssue(
                    "unknown_port", f"composite node {prefix + nid!r} ({cname}) has no output {port!r}",
                    where, node=prefix + nid, port=port,
                    hint=f"exposed outputs: {sorted(_as_dict(comp.get('outputs')))}"))
                return None
            return res_out(target, f"/composites/{cname}/outputs/{port}")

        for i, edge in enumerate(_as_list(edges)):
            if not isinstance(edge, dict) or not isinstance(edge.get("from"), str) or not isinstance(edge.get("to"), str):
                continue
            where = f"{ptr}/edges/{i}"
            src = resolve_out(edge["from"], where)
            dsts = resolve_in(edge["to"], where)
            if src is None:
                continue
            for dst in dsts:
                flat = {"from": src, "to": dst}
                if edge.get("delay"):
                    flat["delay"] = edge["delay"]
                flat_edges.append(flat)
                edge_paths.append(where)
        return resolve_in, resolve_out

    expand(graph.get("nodes"), graph.get("edges"), graph.get("grants"), "", "", ())
    flat = {k: v for k, v in graph.items() if k != "composites"}
    flat["nodes"] = flat_nodes
    flat["edges"] = flat_edges
    if "grants" in graph or flat_grants:
        flat["grants"] = flat_grants
    return Flattened(flat, node_paths, edge_paths, issues)


def _without_composites(graph: dict, nodes: dict) -> Flattened:
    """The common case, fast: nothing to inline, only malformed entries to drop."""
    flat_nodes = {nid: spec for nid, spec in nodes.items() if isinstance(spec, dict)}
    edges, indices = [], []
    for i, edge in enumerate(_as_list(graph.get("edges"))):
        if isinstance(edge, dict) and isinstance(edge.get("from"), str) and isinstance(edge.get("to"), str):
            edges.append(edge)
            indices.append(i)
    edge_paths = _edge_pointers(len(indices) and indices[-1] + 1)
    if len(indices) < len(edge_paths):  # some entries were dropped
        edge_paths = [edge_paths[i] for i in indices]
    flat = dict(graph)
    flat["nodes"] = flat_nodes
    flat["edges"] = edges
    if "grants" in graph:
        flat["grants"] = _as_dict(graph["grants"])
    return Flattened(flat, {nid: f"/nodes/{nid}" for nid in flat_nodes}, edge_paths, [])


_EDGE_POINTERS: list[str] = []


def _edge_pointers(n: int) -> list[str]:
    """["/edges/0", ..., "/edges/<n-1>"] (a fresh list; the strings are made once)."""
    while len(_EDGE_POINTERS) < n:
        _EDGE_POINTERS.append(f"/edges/{len(_EDGE_POINTERS)}")
    return _EDGE_POINTERS[:n]


def flatten(graph: dict) -> dict:
    """The graph with every composite inlined (ids `outer/inner`); raises CompositeError."""
    result = flatten_detailed(graph)
    if result.issues:
        raise CompositeError("; ".join(f"{i.path}: {i.message}" for i in result.issues))
    return copy.deepcopy(result.graph)  # never shares structure with the input

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
    inliner = _Inliner(composites)
    inliner.expand(graph, prefix="", ptr="", stack=())
    flat = {k: v for k, v in graph.items() if k != "composites"}
    flat["nodes"] = inliner.nodes
    flat["edges"] = inliner.edges
    if "grants" in graph or inliner.grants:
        flat["grants"] = inliner.grants
    return Flattened(flat, inliner.node_paths, inliner.edge_paths, inliner.issues)


class _Inliner:
    """Accumulates the flat nodes, edges and grants of a graph whose composites are inlined."""

    def __init__(self, composites: dict):
        self.composites = composites
        self.nodes: dict[str, dict] = {}
        self.node_paths: dict[str, str] = {}
        self.edges: list[dict] = []
        self.edge_paths: list[str] = []
        self.grants: dict[str, dict] = {}
        self.issues: list[FlattenIssue] = []

    def expand(self, body: dict, prefix: str, ptr: str, stack: tuple) -> _Level:
        """Inline one level (the graph, or a composite's body under `prefix`): its plain
        nodes and grants, its composite nodes recursively, then its edges."""
        level = _Level(self, prefix)
        for nid, spec in _as_dict(body.get("nodes")).items():
            spec = _as_dict(spec)
            if spec.get("type") == COMPOSITE_TYPE:
                self._inline_composite(level, nid, spec, ptr, stack)
            else:
                self.nodes[prefix + nid] = spec
                self.node_paths[prefix + nid] = f"{ptr}/nodes/{nid}"
        for gid, grant in _as_dict(body.get("grants")).items():
            self.grants[prefix + gid] = grant
        for i, edge in enumerate(_as_list(body.get("edges"))):
            if isinstance(edge, dict) and isinstance(edge.get("from"), str) and isinstance(edge.get("to"), str):
                self._add_edge(level, edge, f"{ptr}/edges/{i}")
        return level

    def _inline_composite(self, level: _Level, nid: str, spec: dict, ptr: str, stack: tuple) -> None:
        fid = level.prefix + nid
        cname = _as_dict(spec.get("config")).get("composite")
        where = f"{ptr}/nodes/{nid}"
        if not isinstance(cname, str) or cname not in self.composites:
            self.issues.append(FlattenIssue(
                "unknown_composite", f"node {fid!r} refers to composite {cname!r}, which is not defined",
                where + "/config/composite", node=fid,
                hint=f"define it under /composites or use one of {sorted(self.composites)}"))
            return
        if cname in stack:
            self.issues.append(FlattenIssue(
                "recursive_composite", f"composite {cname!r} contains itself (via {' -> '.join(stack + (cname,))})",
                where, node=fid, hint="a composite may not include itself, directly or indirectly"))
            return
        comp = _as_dict(self.composites[cname])
        inner = self.expand(comp, fid + "/", f"/composites/{cname}", stack + (cname,))
        level.composites[nid] = (comp, inner, cname)

    def _add_edge(self, level: _Level, edge: dict, where: str) -> None:
        src = level.resolve_out(edge["from"], where)
        dsts = level.resolve_in(edge["to"], where)
        if src is None:
            return
        for dst in dsts:
            flat = {"from": src, "to": dst}
            if edge.get("delay"):
                flat["delay"] = edge["delay"]
            self.edges.append(flat)
            self.edge_paths.append(where)


class _Level:
    """One inlined level: maps its endpoints (`node.port`) to flat ones, through the
    exposed inputs and outputs of the composite nodes it holds."""

    def __init__(self, inliner: _Inliner, prefix: str):
        self.inliner = inliner
        self.prefix = prefix
        self.composites: dict[str, tuple] = {}  # composite node id -> (composite spec, inner level, name)

    def resolve_in(self, endpoint: str, where: str) -> list[str]:
        nid, port = split_endpoint(endpoint)
        if nid not in self.composites:
            return [self.prefix + endpoint]
        comp, inner, cname = self.composites[nid]
        targets = _as_dict(comp.get("inputs")).get(port)
        if targets is None:
            self.inliner.issues.append(FlattenIssue(
                "unknown_port", f"composite node {self.prefix + nid!r} ({cname}) has no input {port!r}",
                where, node=self.prefix + nid, port=port,
                hint=f"exposed inputs: {sorted(_as_dict(comp.get('inputs')))}"))
            return []
        out = []
        for target in (targets if isinstance(targets, list) else [targets]):
            if isinstance(target, str):
                out.extend(inner.resolve_in(target, f"/composites/{cname}/inputs/{port}"))
        return out

    def resolve_out(self, endpoint: str, where: str) -> str | None:
        nid, port = split_endpoint(endpoint)
        if nid not in self.composites:
            return self.prefix + endpoint
        comp, inner, cname = self.composites[nid]
        target = _as_dict(comp.get("outputs")).get(port)
        if not isinstance(target, str):
            self.inliner.issues.append(FlattenIssue(
                "unknown_port", f"composite node {self.prefix + nid!r} ({cname}) has no output {port!r}",
                where, node=self.prefix + nid, port=port,
                hint=f"exposed outputs: {sorted(_as_dict(comp.get('outputs')))}"))
            return None
        return inner.resolve_out(target, f"/composites/{cname}/outputs/{port}")


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

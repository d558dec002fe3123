"""Behaviour equivalence of two graphs: the same closed loop up to node ids and
nodes that cannot influence the simulator.

A node is live when one of its outputs reaches a simulator input, through
edges or through a state cell a live node reads. Everything else (a node wired
to nothing, a chain that ends nowhere) never changes an action. Two graphs
behave alike when their live parts are isomorphic as labelled graphs (node
label: type, config, composite body and state grants; edge label: the ports
and delay) and their budgets, termination, model profile, executor and the
state cells the live nodes touch are equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from harness.canvas.graph import COMPOSITE_TYPE
from harness.canvas.hashing import canonical_json

# Graph fields that change behaviour (name, description and docs do not).
_GLOBAL_FIELDS = ("schema_version", "executor", "model_profile", "budgets", "termination")


@dataclass(frozen=True)
class LiveGraph:
    graph: nx.DiGraph        # live nodes labelled, edges labelled with their port pairs
    dead: tuple[str, ...]    # node ids that reach no simulator input
    globals: str             # canonical JSON of the behaviour-relevant graph fields


@dataclass(frozen=True)
class Equivalence:
    same: bool
    renamed: dict[str, str] = field(default_factory=dict)   # parent id -> child id, where they differ
    dead_parent: tuple[str, ...] = ()
    dead_child: tuple[str, ...] = ()


def _node(ref: str) -> str:
    return ref.split(".", 1)[0]


def _grants_of(graph: dict, nid: str) -> dict:
    """The node's grants (a composite's inner grants keyed `nid/inner` included), keyed relative to it."""
    out = {}
    for key, grant in (graph.get("grants") or {}).items():
        head, _, rest = key.partition("/")
        if head == nid and isinstance(grant, dict):
            out[rest] = {k: sorted(v) for k, v in grant.items() if isinstance(v, list)}
    return out


def _cells(grants: dict, mode: str) -> set[str]:
    return {c for g in grants.values() for c in g.get(mode, [])}


def live_graph(graph: dict, simulators: set[str]) -> LiveGraph:
    """The part of `graph` that can influence the simulator (`simulators`: its simulator node ids)."""
    nodes = graph.get("nodes") or {}
    edges = [e for e in graph.get("edges") or [] if _node(e["from"]) in nodes and _node(e["to"]) in nodes]
    grants = {nid: _grants_of(graph, nid) for nid in nodes}
    live = set(simulators) & set(nodes)
    changed = True
    while changed:
        read = {c for nid in live for c in _cells(grants[nid], "read")}
        grow = {_node(e["from"]) for e in edges if _node(e["to"]) in live}
        grow |= {nid for nid in nodes if _cells(grants[nid], "write") & read}
        changed = not grow <= live
        live |= grow
    g = nx.DiGraph()
    for nid in live:
        spec = nodes[nid] if isinstance(nodes[nid], dict) else {}
        composite = (spec.get("config") or {}).get("composite") if spec.get("type") == COMPOSITE_TYPE else None
        body = dict((graph.get("composites") or {}).get(composite) or {})   # a composite node's inner graph
        body.pop("doc", None)
        g.add_node(nid, label=canonical_json({"type": spec.get("type"), "config": spec.get("config") or {},
                                              "composite": body, "grants": grants[nid]}))
    for e in edges:
        a, b = _node(e["from"]), _node(e["to"])
        if a in live and b in live:
            ports = g.edges[a, b]["ports"] if g.has_edge(a, b) else ()
            port = (e["from"].partition(".")[2], e["to"].partition(".")[2], int(e.get("delay", 0)))
            g.add_edge(a, b, ports=tuple(sorted((*ports, port))))
    touched = {c for nid in live for mode in ("read", "write") for c in _cells(grants[nid], mode)}
    state = {c: {k: v for k, v in spec.items() if k != "doc"}
             for c, spec in (graph.get("state") or {}).items() if c in touched and isinstance(spec, dict)}
    globals_ = canonical_json({**{k: graph.get(k) for k in _GLOBAL_FIELDS}, "state": state})
    return LiveGraph(g, tuple(sorted(set(nodes) - live)), globals_)


def compare(parent: LiveGraph, child: LiveGraph) -> Equivalence:
    if parent.globals != child.globals:
        return Equivalence(False)
    if _same_ids(parent.graph, child.graph):
        return Equivalence(True, {}, parent.dead, child.dead)
    matcher = nx.algorithms.isomorphism.DiGraphMatcher(
        parent.graph, child.graph, node_match=lambda x, y: x["label"] == y["label"],
        edge_match=lambda x, y: x["ports"] == y["ports"])
    if not matcher.is_isomorphic():
        return Equivalence(False)
    renamed = {a: b for a, b in sorted(matcher.mapping.items()) if a != b}
    return Equivalence(True, renamed, parent.dead, child.dead)


def _same_ids(a: nx.DiGraph, b: nx.DiGraph) -> bool:
    """The identity mapping already matches (preferred over any symmetric one)."""
    return (set(a.nodes) == set(b.nodes) and all(a.nodes[n]["label"] == b.nodes[n]["label"] for n in a.nodes)
            and {e: a.edges[e]["ports"] for e in a.edges} == {e: b.edges[e]["ports"] for e in b.edges})

"""Is a graph valid against schemas/graph.schema.json? Yes/no, reusing parts seen before.

A proposer validates many graphs that differ from each other in a few nodes or
edges. The graph schema checks each node entry and each edge on its own
(`$defs/nodes` is an object of independent entries, `$defs/edges` an array of
independent items), so the whole graph is valid exactly when

- the graph with `nodes` emptied and `edges` emptied is valid, and
- every `{id: node}` entry is valid against `$defs/nodes`, and
- every edge is valid against `$defs/edges` as a one-item list.

Entries and edges (and whole edge lists) found valid are remembered by their exact content (the
`marshal` encoding, which tells `1`, `1.0` and `True` apart and keeps key
order), so a node or edge already seen costs a dictionary lookup. The answer
always equals the whole-graph check (`fast_is_valid("graph")`); a graph whose
values `marshal` cannot encode, or a schema whose node/edge definitions stop
being per-item, takes that whole-graph check directly. Error reports are not
made here: they come from `harness.schemas.iter_schema_errors`.
"""

from __future__ import annotations

import marshal
from functools import lru_cache
from typing import Any

from harness.schemas import fast_is_valid, fast_subschema_is_valid, load_schema

MAX_REMEMBERED = 200_000  # parts per kind; the memo is cleared when full

_valid_nodes: set[bytes] = set()  # {id: node} entries
_valid_edges: set[bytes] = set()  # single edges
_valid_edge_lists: set[bytes] = set()  # whole edge lists

# keywords under which the conjunction over items equals the check of the whole
_PER_ITEM_OBJECT = frozenset({"type", "propertyNames", "additionalProperties", "description"})
_PER_ITEM_ARRAY = frozenset({"type", "items", "description"})


@lru_cache(maxsize=1)
def _decomposable() -> bool:
    defs = load_schema("graph")["$defs"]
    props = load_schema("graph")["properties"]
    return (set(defs["nodes"]) <= _PER_ITEM_OBJECT and set(defs["edges"]) <= _PER_ITEM_ARRAY
            and props.get("nodes") == {"$ref": "#/$defs/nodes"} and props.get("edges") == {"$ref": "#/$defs/edges"})


def graph_schema_valid(graph: Any, reuse: bool = True) -> bool:
    """Whether `graph` satisfies the graph schema (same answer as `fast_is_valid("graph")`).
    `reuse=False`: check the whole graph, remembering nothing."""
    whole = fast_is_valid("graph")
    if not reuse or not isinstance(graph, dict) or not _decomposable():
        return whole(graph)
    nodes, edges = graph.get("nodes"), graph.get("edges")
    if not isinstance(nodes, dict) or not isinstance(edges, (list, type(None))):
        return whole(graph)
    skeleton = dict(graph)
    skeleton["nodes"] = {}
    if edges is not None:
        skeleton["edges"] = []
    if not whole(skeleton):
        return False
    try:
        if not _all_remembered(nodes.items(), _valid_nodes, _node_ok):
            return False
        if not edges:
            return True
        whole_list = marshal.dumps(edges, 2)  # the usual case: the same edges as before
        if whole_list in _valid_edge_lists:
            return True
        if not _all_remembered(edges, _valid_edges, _edge_ok):
            return False
        if len(_valid_edge_lists) >= MAX_REMEMBERED:
            _valid_edge_lists.clear()
        _valid_edge_lists.add(whole_list)
        return True
    except ValueError:  # a value marshal cannot encode (not from JSON): check the whole
        return whole(graph)


def _node_ok(item) -> bool:
    return fast_subschema_is_valid("graph", "/$defs/nodes")(dict((item,)))


def _edge_ok(edge) -> bool:
    return fast_subschema_is_valid("graph", "/$defs/edges")([edge])


def _all_remembered(parts, memo: set[bytes], check) -> bool:
    dumps = marshal.dumps
    for part in parts:
        key = dumps(part, 2)  # version 2: no back-references, so the bytes follow content alone
        if key in memo:
            continue
        if not check(part):
            return False
        if len(memo) >= MAX_REMEMBERED:
            memo.clear()
        memo.add(key)
    return True

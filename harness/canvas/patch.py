"""Structured graph patches: atomic apply and diff.

A patch is `{"ops": [...]}` (schema: schemas/patch.schema.json), a bare list
of those ops, or a bare RFC 6902 list. Every op names the node it concerns
with `id`; the older `node` key of `set_config`/`set_grant` is still read (see
`deprecations`). Ops apply in order to a deep copy; the first failing op raises
PatchError naming its index and the reason, and the input is never modified.

Cascades (so a patch says what it means, not every consequence):
`remove_node` also removes the node's edges and grant; `remove_state` also
removes the cell from every grant.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from typing import Any, Callable

import jsonpatch
import jsonpointer

from harness.canvas.graph import COMPOSITE_TYPE, split_endpoint
from harness.errors import UserError
from harness.schemas import fast_subschema_is_valid, iter_subschema_errors, load_schema

RFC6902_OPS = {"add", "remove", "replace", "move", "copy", "test"}


class PatchError(UserError):
    """A patch that cannot be applied; `index` and `op` locate the failing operation."""

    def __init__(self, index: int | None, op: str | None, reason: str):
        where = f"op #{index} ({op})" if index is not None else "patch"
        super().__init__(f"{where} failed: {reason}", details={"index": index, "op": op, "reason": reason},
                         exit_code=1)
        self.index, self.op, self.reason = index, op, reason


class _OpFailed(Exception):
    pass


STRUCTURED_OPS = ("add_node", "remove_node", "retype_node", "add_edge", "remove_edge", "rewire_edge", "set_config",
                  "add_state", "remove_state", "modify_state", "set_grant", "set_budget", "set_termination",
                  "wrap", "unwrap", "json_patch")
# Ops that once named their node `node`; `id` is the one name across the alphabet.
_RENAMED_NODE_KEY = ("set_config", "set_grant")


def _is_structured_list(patch: list) -> bool:
    return bool(patch) and all(isinstance(op, dict) and op.get("op") in STRUCTURED_OPS for op in patch)


def _old_node_key(op: Any) -> bool:
    return isinstance(op, dict) and op.get("op") in _RENAMED_NODE_KEY and "node" in op and "id" not in op


def deprecations(patch: Any) -> list[str]:
    """One line per op that still uses a deprecated key (read, but say so)."""
    ops = patch.get("ops") if isinstance(patch, dict) else patch if isinstance(patch, list) else None
    return [f"op #{i} ({op['op']}): key 'node' is deprecated, write 'id' (one name for a node across all ops)"
            for i, op in enumerate(ops or []) if _old_node_key(op)]


def normalize_patch(patch: Any) -> list[dict]:
    """The list of structured ops, schema-checked. A bare list of structured ops
    reads as `{"ops": [...]}`; a bare RFC 6902 list becomes one json_patch op."""
    if isinstance(patch, list) and _is_structured_list(patch):
        patch = {"ops": patch}
    if isinstance(patch, list):
        if any(isinstance(op, dict) and op.get("op") in STRUCTURED_OPS for op in patch):
            raise PatchError(None, None, "the list mixes structured ops with RFC 6902 ops: wrap the RFC 6902 ones "
                             "in one {\"op\": \"json_patch\", \"patch\": [...]} op")
        rfc_ok = fast_subschema_is_valid("patch", "/$defs/rfc6902")
        for i, op in enumerate(patch):
            if rfc_ok([op]):
                continue
            name = op.get("op") if isinstance(op, dict) else None
            if name not in RFC6902_OPS and name not in STRUCTURED_OPS:
                raise PatchError(i, name, f"unknown op {name!r}: structured ops are {', '.join(STRUCTURED_OPS)} "
                                 f"(e.g. {{\"op\": \"retype_node\", \"id\": \"memory\", \"type\": \"...\"}}); "
                                 f"RFC 6902 ops are {', '.join(sorted(RFC6902_OPS))}")
            for pointer, message in iter_subschema_errors("patch", "/$defs/rfc6902", [op]):
                raise PatchError(i, op.get("op") if isinstance(op, dict) else None,
                                 f"not an RFC 6902 operation: {pointer[2:] or '/'} {message}".replace("/ ", "")
                                 + "; a structured patch is {\"ops\": [{\"op\": \"retype_node\", \"id\": ..., "
                                 "\"type\": ...}]} with ops named in schemas/patch.schema.json")
        return [{"op": "json_patch", "patch": patch}]
    if not isinstance(patch, dict) or not isinstance(patch.get("ops"), list):
        raise PatchError(None, None, "a patch must be {\"ops\": [...]}, a list of structured ops, or an RFC 6902 list")
    extra = set(patch) - {"ops", "description"}
    if extra:
        raise PatchError(None, None, f"unexpected top-level key(s) {sorted(extra)}")
    ops = [_renamed(op) for op in patch["ops"]]
    checks = _op_checks()
    for i, op in enumerate(ops):
        check = checks.get(op.get("op")) if isinstance(op, dict) and isinstance(op.get("op"), str) else None
        if check is not None and check(op):
            continue
        for pointer, message in iter_subschema_errors("patch", "/$defs/op", op):
            name = op.get("op") if isinstance(op, dict) else None
            raise PatchError(i, name, f"{pointer + ': ' if pointer else ''}{message}")
    return ops


def _renamed(op: Any) -> Any:
    if not _old_node_key(op):
        return op
    op = dict(op)
    op["id"] = op.pop("node")
    return op


@lru_cache(maxsize=1)
def _op_checks() -> dict[str, Callable[[Any], bool]]:
    """op name -> a fast yes/no check of one op against its `then` branch of
    schemas/patch.schema.json (an op object names exactly one branch by its
    `op`); a "no" is then explained by the full schema."""
    branches = load_schema("patch")["$defs"]["op"]["allOf"]
    return {branch["if"]["properties"]["op"]["const"]: fast_subschema_is_valid("patch", f"/$defs/op/allOf/{i}/then")
            for i, branch in enumerate(branches)}


def apply_patch(graph: dict, patch: Any) -> dict:
    """A new graph with the patch applied (the input is never mutated). Raises PatchError.

    Linear in the number of ops: edge ops go through an index of the edges
    (`_EdgeIndex`), written back to the edge list before an op that reads it
    (`_READS_EDGES`) and at the end."""
    ops = normalize_patch(patch)
    doc = copy.deepcopy(graph)
    edges = _LazyEdges(doc)
    for i, op in enumerate(ops):
        name = op["op"]
        try:
            if name in _EDGE_OPS:
                _EDGE_OPS[name](doc, op, edges)
                continue
            if name in _READS_EDGES:
                edges.flush()
            _OPS[name](doc, op)
        except _OpFailed as exc:
            raise PatchError(i, name, str(exc)) from None
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
            raise PatchError(i, name, f"{type(exc).__name__}: {exc}") from None
        except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
            # the working copy is malformed in a way the op did not expect
            raise PatchError(i, name, f"cannot apply to this graph: {type(exc).__name__}: {exc}") from None
    edges.flush()
    return doc


class _LazyEdges:
    """The document's edge index, built on the first edge op and written back
    to /edges by `flush`."""

    def __init__(self, doc: dict):
        self.doc = doc
        self.index: _EdgeIndex | None = None

    def get(self) -> _EdgeIndex:
        if self.index is None:
            self.index = _EdgeIndex(_edges(self.doc))
        return self.index

    def flush(self) -> None:
        if self.index is not None:
            self.doc["edges"] = self.index.as_list()
            self.index = None


class _EdgeIndex:
    """The edge list while edge ops run: edges in order, found by (from, to)
    and by the nodes they touch, each lookup and removal O(1)."""

    def __init__(self, edges: list):
        self.edges: dict[int, Any] = dict(enumerate(edges))  # serial -> edge, in list order
        self.by_pair: dict[tuple, dict[int, None]] = {}
        self.by_node: dict[str, dict[int, None]] = {}
        self.next = len(edges)
        for serial, e in self.edges.items():
            self._index(serial, e)

    def _index(self, serial: int, e) -> None:
        self.by_pair.setdefault((e.get("from"), e.get("to")), {})[serial] = None
        for endpoint in {split_endpoint(e.get("from", ""))[0], split_endpoint(e.get("to", ""))[0]}:
            self.by_node.setdefault(endpoint, {})[serial] = None

    def find(self, src: str, dst: str) -> int | None:
        """The serial of the first edge src -> dst, if any."""
        return next(iter(self.by_pair.get((src, dst), ())), None)

    def append(self, edge: dict) -> None:
        self.edges[self.next] = edge
        self._index(self.next, edge)
        self.next += 1

    def remove(self, serial: int) -> None:
        e = self.edges.pop(serial)
        self.by_pair[(e.get("from"), e.get("to"))].pop(serial)
        for endpoint in {split_endpoint(e.get("from", ""))[0], split_endpoint(e.get("to", ""))[0]}:
            self.by_node[endpoint].pop(serial)

    def touching(self, nid: str) -> list[int]:
        return list(self.by_node.get(nid, ()))

    def as_list(self) -> list:
        return list(self.edges.values())


# -- ops --------------------------------------------------------------------------

def _nodes(doc) -> dict:
    nodes = doc.setdefault("nodes", {})
    if not isinstance(nodes, dict):
        raise _OpFailed("/nodes is not an object")
    return nodes


def _edges(doc) -> list:
    edges = doc.setdefault("edges", [])
    if not isinstance(edges, list):
        raise _OpFailed("/edges is not a list")
    return edges


def _need_node(doc, nid: str) -> dict:
    nodes = _nodes(doc)
    if nid not in nodes:
        raise _OpFailed(f"no node {nid!r} (nodes: {', '.join(sorted(nodes)) or 'none'})")
    return nodes[nid]


def _add_node(doc, op):
    nodes = _nodes(doc)
    if op["id"] in nodes:
        raise _OpFailed(f"node {op['id']!r} already exists")
    spec = {"type": op["type"], "config": copy.deepcopy(op.get("config", {}))}
    if "doc" in op:
        spec["doc"] = op["doc"]
    nodes[op["id"]] = spec


def _remove_node(doc, op, edges: _LazyEdges):
    nid = op["id"]
    _need_node(doc, nid)
    del doc["nodes"][nid]
    if isinstance(doc.get("edges"), list):
        index = edges.get()
        for serial in index.touching(nid):
            index.remove(serial)
    if isinstance(doc.get("grants"), dict):
        doc["grants"].pop(nid, None)


def _retype_node(doc, op):
    spec = _need_node(doc, op["id"])
    spec["type"] = op["type"]
    if "config" in op:
        spec["config"] = copy.deepcopy(op["config"])


def _add_edge(doc, op, lazy: _LazyEdges):
    edges = lazy.get()
    if edges.find(op["from"], op["to"]) is not None:
        raise _OpFailed(f"edge {op['from']} -> {op['to']} already exists")
    edge = {"from": op["from"], "to": op["to"]}
    if op.get("delay"):
        edge["delay"] = op["delay"]
    edges.append(edge)


def _remove_edge(doc, op, lazy: _LazyEdges):
    edges = lazy.get()
    serial = edges.find(op["from"], op["to"])
    if serial is None:
        raise _OpFailed(f"no edge {op['from']} -> {op['to']}")
    edges.remove(serial)


def _rewire_edge(doc, op, lazy: _LazyEdges):
    if ("new_from" in op) == ("new_to" in op):
        raise _OpFailed("give exactly one of new_from (move the source end) or new_to (move the destination end)")
    edges = lazy.get()
    serial = edges.find(op["from"], op["to"])
    if serial is None:
        raise _OpFailed(f"no edge {op['from']} -> {op['to']}")
    edge = dict(edges.edges[serial], **{"from": op.get("new_from", op["from"]), "to": op.get("new_to", op["to"])})
    if "delay" in op:
        edge.pop("delay", None)
        if op["delay"]:
            edge["delay"] = op["delay"]
    if edges.find(edge["from"], edge["to"]) is not None:
        raise _OpFailed(f"edge {edge['from']} -> {edge['to']} already exists")
    edges.remove(serial)
    edges.append(edge)


def _set_config(doc, op):
    spec = _need_node(doc, op["id"])
    if op["pointer"] == "":
        if not isinstance(op["value"], dict):
            raise _OpFailed("pointer \"\" replaces the whole config, so the value must be an object")
        spec["config"] = copy.deepcopy(op["value"])
        return
    spec.setdefault("config", {})
    try:
        spec["config"] = jsonpatch.apply_patch(
            spec["config"], [{"op": "add", "path": op["pointer"], "value": op["value"]}])
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise _OpFailed(f"config pointer {op['pointer']!r} of node {op['id']!r}: {exc}") from None


def _add_state(doc, op):
    state = doc.setdefault("state", {})
    if op["cell"] in state:
        raise _OpFailed(f"state cell {op['cell']!r} already exists")
    state[op["cell"]] = copy.deepcopy(op["spec"])


def _remove_state(doc, op):
    state = doc.get("state")
    if not isinstance(state, dict) or op["cell"] not in state:
        raise _OpFailed(f"no state cell {op['cell']!r}")
    del state[op["cell"]]
    for grant in (doc.get("grants") or {}).values():
        for access in ("read", "write"):
            if op["cell"] in grant.get(access, []):
                grant[access] = [c for c in grant[access] if c != op["cell"]]


def _modify_state(doc, op):
    changes = {k: v for k, v in op.items() if k not in ("op", "cell")}
    if not changes:
        raise _OpFailed("nothing to change: give at least one of type, reducer, lifetime, initial, doc")
    state = doc.get("state")
    if not isinstance(state, dict) or not isinstance(state.get(op["cell"]), dict):
        raise _OpFailed(f"no state cell {op['cell']!r} (cells: {', '.join(sorted(state or {})) or 'none'})")
    state[op["cell"]].update(copy.deepcopy(changes))


def _set_grant(doc, op):
    _need_node(doc, op["id"])
    grants = doc.setdefault("grants", {})
    grant = grants.setdefault(op["id"], {})
    for access in ("read", "write"):
        if access in op:
            grant[access] = list(op[access])
    if not any(grant.get(a) for a in ("read", "write")):
        del grants[op["id"]]


def _merge_keys(doc, key: str, values: dict):
    target = doc.setdefault(key, {})
    if not isinstance(target, dict):
        raise _OpFailed(f"/{key} is not an object")
    for k, v in values.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = v


def _set_budget(doc, op):
    _merge_keys(doc, "budgets", op["budgets"])


def _set_termination(doc, op):
    _merge_keys(doc, "termination", op["termination"])


def _wrap(doc, op):
    nodes = _nodes(doc)
    members = list(op["nodes"])
    for nid in members:
        _need_node(doc, nid)
    if op["id"] in nodes and op["id"] not in members:
        raise _OpFailed(f"node {op['id']!r} already exists")
    composites = doc.setdefault("composites", {})
    if op["composite"] in composites:
        raise _OpFailed(f"composite {op['composite']!r} already exists")
    inside = set(members)
    comp: dict[str, Any] = {"nodes": {nid: nodes.pop(nid) for nid in members}, "edges": [],
                            "inputs": {}, "outputs": {}}
    outer_edges = []
    for e in _edges(doc):
        s, sp = split_endpoint(e["from"])
        d, dp = split_endpoint(e["to"])
        if s in inside and d in inside:
            comp["edges"].append(e)
        elif d in inside:
            pin = f"{d}_{dp}"
            comp["inputs"][pin] = e["to"]
            outer_edges.append({**e, "to": f"{op['id']}.{pin}"})
        elif s in inside:
            pin = f"{s}_{sp}"
            comp["outputs"][pin] = e["from"]
            outer_edges.append({**e, "from": f"{op['id']}.{pin}"})
        else:
            outer_edges.append(e)
    doc["edges"] = outer_edges
    grants = doc.get("grants")
    if isinstance(grants, dict):
        moved = {nid: grants.pop(nid) for nid in members if nid in grants}
        if moved:
            comp["grants"] = moved
    composites[op["composite"]] = comp
    nodes[op["id"]] = {"type": COMPOSITE_TYPE, "config": {"composite": op["composite"]}}


def _unwrap(doc, op):
    spec = _need_node(doc, op["id"])
    if spec.get("type") != COMPOSITE_TYPE:
        raise _OpFailed(f"node {op['id']!r} is a {spec.get('type')!r}, not a composite")
    cname = (spec.get("config") or {}).get("composite")
    comp = (doc.get("composites") or {}).get(cname)
    if not isinstance(comp, dict):
        raise _OpFailed(f"node {op['id']!r} refers to undefined composite {cname!r}")
    nodes = _nodes(doc)
    del nodes[op["id"]]
    rename = {}
    for inner in comp.get("nodes", {}):
        rename[inner] = inner if inner not in nodes else f"{op['id']}_{inner}"
        if rename[inner] in nodes:
            raise _OpFailed(f"cannot unwrap: node id {rename[inner]!r} is taken")

    def inner_ep(endpoint: str) -> str:
        n, p = split_endpoint(endpoint)
        return f"{rename.get(n, n)}.{p}"

    for inner, inner_spec in comp.get("nodes", {}).items():
        nodes[rename[inner]] = copy.deepcopy(inner_spec)
    new_edges = [{**e, "from": inner_ep(e["from"]), "to": inner_ep(e["to"])} for e in comp.get("edges", [])]
    for e in _edges(doc):
        s, sp = split_endpoint(e["from"])
        d, dp = split_endpoint(e["to"])
        froms = [e["from"]]
        tos = [e["to"]]
        if s == op["id"]:
            target = comp.get("outputs", {}).get(sp)
            if target is None:
                raise _OpFailed(f"edge {e['from']} -> {e['to']}: composite {cname!r} has no output {sp!r}")
            froms = [inner_ep(target)]
        if d == op["id"]:
            targets = comp.get("inputs", {}).get(dp)
            if targets is None:
                raise _OpFailed(f"edge {e['from']} -> {e['to']}: composite {cname!r} has no input {dp!r}")
            tos = [inner_ep(t) for t in (targets if isinstance(targets, list) else [targets])]
        new_edges.extend({**e, "from": f, "to": t} for f in froms for t in tos)
    doc["edges"] = new_edges
    for inner, grant in (comp.get("grants") or {}).items():
        doc.setdefault("grants", {})[rename.get(inner, inner)] = copy.deepcopy(grant)
    still_used = any(s.get("type") == COMPOSITE_TYPE and (s.get("config") or {}).get("composite") == cname
                     for s in nodes.values()) or any(
        s.get("type") == COMPOSITE_TYPE and (s.get("config") or {}).get("composite") == cname
        for c in doc["composites"].values() for s in c.get("nodes", {}).values())
    if not still_used:
        del doc["composites"][cname]
        if not doc["composites"]:
            del doc["composites"]


def _json_patch(doc, op):
    patched = doc
    for j, inner in enumerate(op["patch"]):  # one at a time, to name the inner op that fails
        try:
            patched = jsonpatch.apply_patch(patched, [inner], in_place=patched is not doc)
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
            raise _OpFailed(f"RFC 6902 op #{j} ({inner.get('op')} {inner.get('path')}): {exc}") from None
    if patched is not doc:
        doc.clear()
        doc.update(patched)


_OPS: dict[str, Callable[[dict, dict], None]] = {
    "add_node": _add_node, "retype_node": _retype_node, "set_config": _set_config,
    "add_state": _add_state, "remove_state": _remove_state, "modify_state": _modify_state, "set_grant": _set_grant,
    "set_budget": _set_budget, "set_termination": _set_termination,
    "wrap": _wrap, "unwrap": _unwrap, "json_patch": _json_patch,
}
_EDGE_OPS: dict[str, Callable[[dict, dict, _LazyEdges], None]] = {
    "remove_node": _remove_node, "add_edge": _add_edge, "remove_edge": _remove_edge, "rewire_edge": _rewire_edge,
}
_READS_EDGES = frozenset({"wrap", "unwrap", "json_patch"})  # the other _OPS never touch /edges


# -- diff --------------------------------------------------------------------------

def _edge_key(e) -> str:
    return json.dumps(e, sort_keys=True, default=str)


def _plain_edge(e) -> bool:
    return isinstance(e, dict) and isinstance(e.get("from"), str) and isinstance(e.get("to"), str) \
        and set(e) <= {"from", "to", "delay"} and e.get("delay", 0) in (0, 1)


def diff_graphs(a: dict, b: dict) -> dict:
    """A structured patch turning `a` into `b` (apply_patch(a, diff) == b).

    Nodes, edges, configs, state cells, grants, budgets and termination get
    structured ops; whatever those do not reproduce exactly (edge order, other
    keys, composites) is finished with one json_patch op.
    """
    ops: list[dict] = []
    an, bn = _dict(a.get("nodes")), _dict(b.get("nodes"))
    removed = [n for n in an if n not in bn]
    ae, be = _list(a.get("edges")), _list(b.get("edges"))
    b_keys = {_edge_key(e) for e in be}
    for e in ae:
        if _edge_key(e) not in b_keys and _plain_edge(e) and not (
                split_endpoint(e["from"])[0] in removed or split_endpoint(e["to"])[0] in removed):
            ops.append({"op": "remove_edge", "from": e["from"], "to": e["to"]})
    ops += [{"op": "remove_node", "id": n} for n in removed]
    for nid, spec in bn.items():
        if not isinstance(spec, dict):
            continue
        old = an.get(nid)
        if not isinstance(old, dict) and nid in an:
            continue  # malformed on one side: left to the final json_patch
        if old is None:
            op = {"op": "add_node", "id": nid, "type": spec.get("type"), "config": spec.get("config", {})}
            if "doc" in spec:
                op["doc"] = spec["doc"]
            ops.append(op)
        elif old.get("type") != spec.get("type"):
            ops.append({"op": "retype_node", "id": nid, "type": spec.get("type"), "config": spec.get("config", {})})
        elif old.get("config", {}) != spec.get("config", {}):
            ops.append({"op": "set_config", "id": nid, "pointer": "", "value": spec.get("config", {})})
    a_keys = {_edge_key(e) for e in ae}
    for e in be:
        if _plain_edge(e) and _edge_key(e) not in a_keys:
            op = {"op": "add_edge", "from": e.get("from"), "to": e.get("to")}
            if e.get("delay"):
                op["delay"] = e["delay"]
            ops.append(op)
    a_state, b_state = _dict(a.get("state")), _dict(b.get("state"))
    ops += [{"op": "remove_state", "cell": c} for c in a_state if c not in b_state]
    ops += [{"op": "add_state", "cell": c, "spec": s} for c, s in b_state.items() if c not in a_state]
    for c, spec in b_state.items():
        old = a_state.get(c)
        if isinstance(old, dict) and isinstance(spec, dict) and old != spec and set(old) <= set(spec):
            ops.append({"op": "modify_state", "cell": c, **{k: v for k, v in spec.items() if old.get(k) != v}})
    for key, op_name in (("budgets", "set_budget"), ("termination", "set_termination")):
        old, new = _dict(a.get(key)), _dict(b.get(key))
        changes = {k: v for k, v in new.items() if old.get(k) != v}
        changes.update({k: None for k in old if k not in new})
        if changes and isinstance(b.get(key), dict):
            ops.append({"op": op_name, key: changes})
    ops = _rewires(ops)
    # grants last: node and state ops above may have cascaded into them
    ops, current = _applicable(a, ops)
    cg, bg = _dict(current.get("grants")), _dict(b.get("grants"))
    for nid in sorted(set(cg) | set(bg)):
        if cg.get(nid) != bg.get(nid) and nid in _dict(current.get("nodes")):
            new = _dict(bg.get(nid))
            ops.append({"op": "set_grant", "id": nid, "read": new.get("read", []), "write": new.get("write", [])})
    ops, current = _applicable(a, ops)
    rest = jsonpatch.make_patch(current, b).patch
    if rest:
        ops.append({"op": "json_patch", "patch": rest})
    return {"ops": ops}


def _rewires(ops: list[dict]) -> list[dict]:
    """A removed and an added edge that share one end become one rewire_edge."""
    added = [op for op in ops if op["op"] == "add_edge"]
    out = []
    for op in ops:
        if op["op"] == "remove_edge":
            for new in added:
                if (new["from"] == op["from"]) != (new["to"] == op["to"]):
                    added.remove(new)
                    end = {"new_to": new["to"]} if new["from"] == op["from"] else {"new_from": new["from"]}
                    op = {"op": "rewire_edge", "from": op["from"], "to": op["to"], **end, "delay": new.get("delay", 0)}
                    break
        out.append(op)
    return [op for op in out if op["op"] != "add_edge" or op in added]


def _applicable(a: dict, ops: list[dict]) -> tuple[list[dict], dict]:
    """Drop structured ops that would fail on an unusual graph (the final
    json_patch covers them); returns the kept ops and their result."""
    kept, current = [], copy.deepcopy(a)
    for op in ops:
        try:
            current = apply_patch(current, {"ops": [op]})
        except PatchError:
            continue
        kept.append(op)
    return kept, current


def _dict(x) -> dict:
    return x if isinstance(x, dict) else {}


def _list(x) -> list:
    return x if isinstance(x, list) else []

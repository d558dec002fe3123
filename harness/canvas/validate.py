"""Static validation: every problem of a graph at once, as structured records.

The proposer reads these, so each names the node / port / cell involved, a
JSON pointer into the graph as written (composites included), and a hint.
"""

from __future__ import annotations

import difflib
import gc
import marshal
import operator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.canvas import types as T
from harness.canvas.context import REDUCERS
from harness.canvas.graph import flatten_detailed, split_endpoint
from harness.canvas.registry import CANDIDATE_NAMESPACE, NodeType, Registry, for_graph
from harness.canvas.schema_memo import graph_schema_valid
from harness.confine import confined_file, profile_places
from harness.schemas import iter_schema_errors, json_pointer

CODES = (
    "schema", "unknown_executor", "nodeset_error", "unknown_composite", "recursive_composite",
    "unknown_type", "unknown_node", "unknown_port", "missing_port", "type_mismatch", "bad_type",
    "unconnected_input", "duplicate_edge", "cycle", "no_grant", "unknown_cell", "bad_reducer",
    "missing_budget", "model_profile", "privileged_leak", "privileged_to_candidate", "bad_config", "no_simulator",
    "multiple_simulators",
)


@dataclass
class Problem:
    code: str
    message: str
    hint: str = ""
    node: str | None = None
    port: str | None = None
    cell: str | None = None
    path: str = ""
    severity: str = "error"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def errors_only(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


def validate_graph(graph: Any, registry: Registry | None = None, candidate_dir: str | Path | None = None,
                   *, pinned_profile: str | None = None, reuse: bool = True) -> list[Problem]:
    """Every problem of `graph` (schema and semantics), in a stable order.

    `pinned_profile`: the executor's pinned model-profile name, if the caller
    wants the graph's `model_profile` checked against it.
    `reuse`: let parts that earlier validations found valid be looked up by
    their content instead of being checked again (schema parts, node configs,
    the wiring); the result is the same either way. `False` checks everything.
    """
    if not isinstance(graph, dict):
        return [Problem("schema", f"a graph must be a JSON object, got {type(graph).__name__}", path="")]
    with _without_cycle_collection():
        return _Validator(graph, registry, candidate_dir, pinned_profile, reuse).run()


@contextmanager
def _without_cycle_collection():
    """Validation allocates many short-lived, acyclic objects (freed by reference
    counting); the cycle collector's passes over the whole heap during it would
    only cost time, growing with the size of the process. Off while validating."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _close(name: str, options) -> str:
    match = difflib.get_close_matches(name, list(options), n=3)
    return f"did you mean {', '.join(repr(m) for m in match)}?" if match else ""


def _ports_text(ports: dict) -> str:
    return ", ".join(f"{k}: {v.type}" for k, v in ports.items()) or "(none)"


class _Validator:
    def __init__(self, graph, registry, candidate_dir, pinned_profile, reuse=True):
        self.graph = graph
        self.reuse = reuse
        self.candidate_dir = Path(candidate_dir) if candidate_dir is not None else None
        self.registry = registry or for_graph(graph, self.candidate_dir)
        self.pinned_profile = pinned_profile
        self.problems: list[Problem] = []

    def add(self, code, message, hint="", **where) -> None:
        self.problems.append(Problem(code, message, hint, **where))

    def run(self) -> list[Problem]:
        g = self.graph
        if not graph_schema_valid(g, self.reuse):
            for pointer, message in iter_schema_errors("graph", g):
                self.add("schema", message, "see schemas/graph.schema.json", path=pointer)
        self.check_registry()
        flat = flatten_detailed(g)
        for issue in flat.issues:
            self.add(issue.code, issue.message, issue.hint, node=issue.node, port=issue.port, path=issue.path)
        self.flat = flat.graph
        self.node_paths = flat.node_paths
        self.edge_paths = flat.edge_paths
        self.check_nodes()
        self.check_wiring()
        self.check_state_and_grants()
        self.check_budgets()
        self.check_models()
        self.check_leaks()
        return self.problems

    # -- registry and nodes ----------------------------------------------------
    def check_registry(self) -> None:
        executor = self.graph.get("executor")
        if isinstance(executor, str) and executor:
            error = self.registry.ensure_executor(executor)
            if error:
                self.add("unknown_executor", error, "the executor must be a package under executors/", path="/executor")
        for where, message in getattr(self.registry, "load_errors", []):
            self.add("nodeset_error", f"{where}: {message}", "fix the candidate's node-type module", path="")

    def check_nodes(self) -> None:
        self.types: dict[str, NodeType] = {}
        sims = []
        for nid, spec in self.flat["nodes"].items():
            tname = spec.get("type")
            path = self.node_paths[nid]
            if not isinstance(tname, str):
                continue  # schema error already reported
            nt = self.registry.get(tname)
            if nt is None:
                self.add("unknown_type", f"node {nid!r} has unknown type {tname!r}",
                         _close(tname, self.registry.names()) or "run `architect nodes` for the registered types",
                         node=nid, path=path + "/type")
                continue
            self.types[nid] = nt
            if nt.is_simulator:
                sims.append(nid)
            config = spec.get("config", {})
            if isinstance(config, dict):
                if not nt.config_is_valid(config, self.reuse):
                    for err in nt.config_validator.iter_errors(config):
                        self.add("bad_config", f"node {nid!r} ({tname}) config: {err.message}",
                                 f"config schema of {tname}: see `architect nodes --json`",
                                 node=nid, path=path + "/config" + json_pointer(err.absolute_path))
        if not sims:
            self.add("no_simulator", "the graph has no simulator node",
                     "add the executor's simulator node type (role 'simulator') and wire its action input",
                     path="/nodes")
        else:
            executor = self.graph.get("executor")
            sim_type = self.types[sims[0]].name
            if isinstance(executor, str) and not sim_type.startswith(executor + "."):
                self.add("no_simulator", f"simulator node {sims[0]!r} has type {sim_type!r}, which is not the "
                         f"executor {executor!r}'s", f"use the simulator registered by executors/{executor}",
                         node=sims[0], path=self.node_paths[sims[0]] + "/type")
        if len(sims) > 1:
            for nid in sims[1:]:
                self.add("multiple_simulators", f"node {nid!r} is a second simulator (first: {sims[0]!r})",
                         "a graph has exactly one simulator node", node=nid, path=self.node_paths[nid])
        self.sim = sims[0] if sims else None

    # -- edges -----------------------------------------------------------------
    def check_wiring(self) -> None:
        """Edges, port types, unconnected inputs and cycles. These depend only on
        the flat edges (and where they came from) and on each node's id and
        type, so a graph sharing those with one validated before without a
        problem here (e.g. the same graph with a config value changed) reuses
        that result instead of recomputing it."""
        key, snapshot = _wiring_key(self.flat, self.edge_paths, self.types) if self.reuse else (None, [])
        known = _WIRING.get(key) if key is not None else None
        if known is not None and len(known[0]) == len(snapshot) and all(map(operator.is_, known[0], snapshot)):
            (_types, self.incoming, self.out_edges, self.valid_edges, self.attempted,
             self.order, self._succ, self._acyclic) = known
            return
        before = len(self.problems)
        self.check_edges()
        self.check_unconnected()
        self.check_cycles()
        if key is not None and len(self.problems) == before:
            if len(_WIRING) >= _WIRING_LIMIT:
                _WIRING.clear()
            _WIRING[key] = (snapshot, self.incoming, self.out_edges, self.valid_edges, self.attempted,
                            self.order, self._succ, self._acyclic)

    def _endpoint(self, endpoint: str, direction: str, edge_path: str):
        """(node, port, PortSpec) or None after reporting the problem."""
        nid, port = split_endpoint(endpoint)
        field = "/from" if direction == "out" else "/to"
        if not port:
            self.add("missing_port", f"edge endpoint {endpoint!r} names no port", "write endpoints as \"node.port\"",
                     node=nid, path=edge_path + field)
            return None
        if nid not in self.flat["nodes"]:
            self.add("unknown_node", f"edge {direction == 'out' and 'source' or 'target'} {endpoint!r}: no node {nid!r}",
                     _close(nid, self.flat["nodes"]) or f"nodes: {', '.join(sorted(self.flat['nodes']))}",
                     node=nid, port=port, path=edge_path + field)
            return None
        nt = self.types.get(nid)
        if nt is None:
            return None  # unknown type, reported once at the node
        ports, other = (nt.outputs, nt.inputs) if direction == "out" else (nt.inputs, nt.outputs)
        spec = ports.get(port)
        if spec is None:
            kind = "output" if direction == "out" else "input"
            hint = f"{nt.name} {kind}s: {_ports_text(ports)}"
            if port in other:
                hint = f"{port!r} is an{' input' if direction == 'out' else ' output'} of {nt.name}; " + hint
            else:
                close = _close(port, ports)
                hint = (close + " " if close else "") + hint
            self.add("unknown_port", f"node {nid!r} ({nt.name}) has no {kind} port {port!r}", hint,
                     node=nid, port=port, path=edge_path + field)
            return None
        return nid, port, spec

    def check_edges(self) -> None:
        nodes, types = self.flat["nodes"], self.types
        self.incoming: dict[str, dict[str, list]] = {nid: {} for nid in nodes}
        self.out_edges: dict[str, list] = {nid: [] for nid in nodes}
        self.valid_edges = []  # (src, sport, dst, dport, delayed, path)
        self.attempted: set[tuple[str, str]] = set()
        incoming, out_edges, valid_edges = self.incoming, self.out_edges, self.valid_edges
        seen = set()
        for edge, path in zip(self.flat["edges"], self.edge_paths):
            key = (edge["from"], edge["to"])
            if key in seen:
                self.add("duplicate_edge", f"edge {edge['from']} -> {edge['to']} appears twice", "remove one",
                         path=path, severity="warning")
                continue
            seen.add(key)
            s, sp = split_endpoint(key[0])
            d, dp = split_endpoint(key[1])
            s_type, d_type = types.get(s), types.get(d)
            if s_type is None or d_type is None or sp not in s_type.outputs or dp not in d_type.inputs:
                src = self._endpoint(edge["from"], "out", path)  # reports what is wrong
                dst = self._endpoint(edge["to"], "in", path)
                if src is None or dst is None:
                    # the input was aimed at: do not also report it as unconnected
                    self.attempted.add((d, dp))
                    continue
            e = (s, sp, d, dp, bool(edge.get("delay")), path)
            valid_edges.append(e)
            incoming[d].setdefault(dp, []).append(e)
            out_edges[s].append(e)
        self.check_types()

    def _order(self) -> list[str]:
        """Nodes in dependency order (non-delay edges, not into the simulator); cyclic ones last."""
        nodes = list(self.types)
        indeg = {n: 0 for n in nodes}
        succ: dict[str, list] = {n: [] for n in nodes}
        for s, _sp, d, _dp, delayed, _p in self.valid_edges:
            if not delayed and d != self.sim:
                indeg[d] += 1
                succ[s].append(d)
        ready = [n for n in nodes if indeg[n] == 0]
        order = []
        while ready:
            n = ready.pop()
            order.append(n)
            for m in succ[n]:
                indeg[m] -= 1
                if indeg[m] == 0:
                    ready.append(m)
        self._succ = succ
        self._acyclic = len(order) == len(nodes)
        order += [n for n in nodes if indeg[n] > 0]
        if self.sim in order:
            order.remove(self.sim)
            order.append(self.sim)
        return order

    def check_types(self) -> None:
        self.order = self._order()
        types = self.types
        bindings: dict[str, dict] = {}  # node -> its type variables' bindings, once it has any
        for dst in self.order:
            d_type = types[dst]
            for port, edges in self.incoming[dst].items():
                dst_text = d_type.inputs[port].type
                for s, sp, _d, _dp, _delayed, path in edges:
                    src_text = types[s].outputs[sp].type
                    if _plain_flow(src_text, dst_text):
                        continue
                    self._check_flow(s, sp, dst, port, src_text, dst_text, path, bindings)

    def _check_flow(self, s, sp, dst, port, src_text, dst_text, path, bindings) -> None:
        """One edge whose types involve type variables or do not flow: bind or report."""
        dst_t = T.parse(dst_text)
        src_t = T.substitute(T.parse(src_text), bindings.get(s, {}))
        dst_bindings = bindings.setdefault(dst, {})
        ok = T.unify(src_t, dst_t, dst_bindings) if T.has_typevars(dst_t) else T.flows(src_t, dst_t)
        if ok:
            return
        shown_dst = T.format_type(T.substitute(dst_t, dst_bindings)) if T.has_typevars(dst_t) else dst_text
        resolved = T.substitute(dst_t, dst_bindings)
        converters = [] if T.has_typevars(resolved) or T.has_typevars(src_t) else self._converters(src_t, resolved)
        via = f" such as {', '.join(converters)}" if converters else ""
        self.add("type_mismatch",
                 f"{s}.{sp} ({T.format_type(src_t)}) cannot flow into {dst}.{port} ({shown_dst})",
                 f"{dst}.{port} expects {shown_dst}; connect a port of that type or insert a "
                 f"converting node{via}", node=dst, port=port, path=path)

    def _converters(self, src_t, dst_t) -> list[str]:
        """Registered types taking src_t in and giving dst_t out (specific types only)."""
        def specific(t):
            return t[0] != T.ANY and not T.has_typevars(t)

        found = []
        for nt in self.registry.all():
            if nt.is_simulator:
                continue
            ins = [p for p in nt.inputs.values() if specific(T.parse(p.type)) and T.flows(src_t, T.parse(p.type))]
            outs = [p for p in nt.outputs.values() if not p.privileged and specific(T.parse(p.type))
                    and T.flows(T.parse(p.type), dst_t)]
            if ins and outs:
                found.append(f"{nt.name} ({ins[0].name} -> {outs[0].name})")
        return found[:3]

    def check_unconnected(self) -> None:
        for nid, nt in self.types.items():
            for port, spec in nt.inputs.items():
                if spec.required and port not in self.incoming[nid] and (nid, port) not in self.attempted:
                    self.add("unconnected_input", f"required input {nid}.{port} ({spec.type}) has no incoming edge",
                             self._source_hint(nid, spec.type), node=nid, port=port, path=self.node_paths[nid])

    def _source_hint(self, nid: str, type_text: str) -> str:
        exact, generic = [], []
        for o, ont in self.types.items():
            if o == nid:
                continue
            for p, ps in ont.outputs.items():
                if ps.privileged or not T.compatible(ps.type, type_text):
                    continue
                t = T.parse(ps.type)
                (generic if t[0] == T.ANY or T.has_typevars(t) else exact).append(f"{o}.{p}")
        options = exact or generic
        if options:
            more = f" (+{len(options) - 5} more)" if len(options) > 5 else ""
            return f"add an edge from a compatible output, e.g. {', '.join(options[:5])}{more}"
        return f"no node in the graph outputs {type_text}; add one (see `architect nodes`)"

    def check_cycles(self) -> None:
        if self._acyclic:
            return
        for component in _strongly_connected(list(self.types), self._succ):
            if len(component) == 1 and component[0] not in self._succ[component[0]]:
                continue
            members = set(component)
            cycle_edges = [e for e in self.valid_edges
                           if e[0] in members and e[2] in members and not e[4] and e[2] != self.sim]
            shown = ", ".join(f"{s}.{sp} -> {d}.{dp}" for s, sp, d, dp, _x, _p in cycle_edges[:6])
            last = cycle_edges[-1] if cycle_edges else None
            example = f" (e.g. {last[0]}.{last[1]} -> {last[2]}.{last[3]} at {last[5]})" if last else ""
            self.add("cycle", f"cycle among nodes {sorted(members)} not broken by the simulator or a delay ({shown})",
                     f"add \"delay\": 1 to one edge of the cycle{example}, or route the loop through the simulator",
                     node=sorted(members)[0], path=cycle_edges[0][5] if cycle_edges else "/edges")

    # -- state, grants, budgets, models ---------------------------------------------
    def check_state_and_grants(self) -> None:
        state = self.flat.get("state") if isinstance(self.flat.get("state"), dict) else {}
        for cell, spec in state.items():
            if not isinstance(spec, dict):
                continue
            where = f"/state/{cell}"
            reducer, type_text = spec.get("reducer"), spec.get("type")
            parsed = None
            if isinstance(type_text, str):
                try:
                    parsed = T.parse(type_text)
                except T.TypeSyntaxError as exc:
                    self.add("bad_type", f"state cell {cell!r}: {exc}", "e.g. \"List[Pose]\", \"Map\", \"Int\"",
                             cell=cell, path=where + "/type")
            if isinstance(reducer, str):
                if reducer not in REDUCERS:
                    self.add("bad_reducer", f"state cell {cell!r} has unknown reducer {reducer!r}",
                             f"reducers: {', '.join(REDUCERS)}", cell=cell, path=where + "/reducer")
                elif parsed is not None and not _reducer_fits(reducer, parsed):
                    self.add("bad_reducer", f"reducer {reducer!r} does not fit cell {cell!r} of type {type_text}",
                             _REDUCER_NEEDS[reducer], cell=cell, path=where + "/reducer")
        grants = self.flat.get("grants") if isinstance(self.flat.get("grants"), dict) else {}
        self.reads: dict[str, set] = {}
        self.writes: dict[str, set] = {}
        for nid, grant in grants.items():
            if not isinstance(grant, dict):
                continue
            path = f"/grants/{nid}"
            if nid not in self.flat["nodes"]:
                self.add("unknown_node", f"grant for {nid!r}, which is not a node",
                         _close(nid, self.flat["nodes"]) or "grants are keyed by node id; remove it or add the node",
                         node=nid, path=path)
            for access in ("read", "write"):
                listed = grant.get(access, [])
                listed = listed if isinstance(listed, list) else []
                (self.reads if access == "read" else self.writes)[nid] = {c for c in listed if isinstance(c, str)}
                for i, cell in enumerate(listed):
                    if isinstance(cell, str) and cell not in state:
                        self.add("unknown_cell", f"{nid!r} is granted {access} on unknown state cell {cell!r}",
                                 _close(cell, state) or "declare it under /state (add_state)",
                                 node=nid, cell=cell, path=f"{path}/{access}/{i}")
        for nid, nt in self.types.items():
            if not (nt.state_read or nt.state_write):
                continue
            reads, writes = nt.state_cells(self.flat["nodes"][nid].get("config"))
            for access, cells, granted in (("read", reads, self.reads), ("write", writes, self.writes)):
                for cell in cells:
                    if cell not in state:
                        self.add("unknown_cell", f"node {nid!r} ({nt.name}) {access}s state cell {cell!r}, which is not declared",
                                 "declare it under /state (add_state)", node=nid, cell=cell, path=self.node_paths[nid])
                    elif cell not in granted.get(nid, ()):
                        self.add("no_grant", f"node {nid!r} ({nt.name}) {access}s state cell {cell!r} without a {access} grant",
                                 f"add a set_grant op giving {nid!r} {access} on {cell!r}",
                                 node=nid, cell=cell, path=f"/grants/{nid}" if nid in grants else "/grants")

    def check_budgets(self) -> None:
        budgets = self.graph.get("budgets")
        if not isinstance(budgets, dict):
            self.add("missing_budget", "the graph has no budgets", "add budgets with max_steps and wall_seconds",
                     path="/budgets")
            budgets = {}
        else:
            for key in ("max_steps", "wall_seconds"):
                if key not in budgets:
                    self.add("missing_budget", f"budgets.{key} is missing (it guarantees termination)",
                             f"set_budget {{\"{key}\": ...}}", path="/budgets")
        model_nodes = [n for n, nt in self.types.items() if nt.uses_model]
        if model_nodes:
            for key in ("model_calls", "tokens"):
                if not budgets.get(key):
                    self.add("missing_budget",
                             f"budgets.{key} is {'missing' if key not in budgets else 0} but model nodes {model_nodes} call a model",
                             f"set_budget {{\"{key}\": N}} with N > 0", path=f"/budgets/{key}" if key in budgets else "/budgets")

    def check_models(self) -> None:
        model_nodes = [n for n, nt in self.types.items() if nt.uses_model]
        profile = self.graph.get("model_profile")
        name = profile.get("name") if isinstance(profile, dict) else None
        if self.pinned_profile is not None and profile is not None and name != self.pinned_profile:
            self.add("model_profile", f"model_profile {name!r} is not the pinned profile {self.pinned_profile!r}",
                     f"set /model_profile/name to {self.pinned_profile!r}", path="/model_profile")
        if isinstance(profile, dict) and isinstance(profile.get("path"), str) and self.candidate_dir is not None:
            rel = profile["path"]
            if confined_file(rel, profile_places(self.candidate_dir)) is None:
                self.add("model_profile", f"model_profile path {rel[:200]!r} names no file inside the candidate "
                         "folder or the project's profiles/ folder",
                         "a relative path to a file in the candidate, or profiles/<name>.yaml", path="/model_profile/path")
        for nid in model_nodes:
            path = self.node_paths[nid]
            if profile is None:
                self.add("model_profile", f"node {nid!r} calls a model but the graph pins no model_profile",
                         "set /model_profile to the executor's pinned profile", node=nid, path=path)
                continue
            config = self.flat["nodes"][nid].get("config") or {}
            for key in ("model_profile", "profile", "model"):
                value = config.get(key) if isinstance(config, dict) else None
                if isinstance(value, str) and value not in (name, profile.get("path")):
                    self.add("model_profile", f"node {nid!r} uses {key} {value!r}, not the pinned profile {name!r}",
                             "model nodes must use the graph's model_profile; remove the override",
                             node=nid, path=f"{path}/config/{key}")

    # -- leaks -------------------------------------------------------------------
    def check_leaks(self) -> None:
        """Privileged outputs must not reach the simulator's inputs through
        edges or through state cells (a tainted writer taints the cell, a
        reader of a tainted cell is tainted), nor any candidate-authored node
        at all, whatever it does with them: a candidate's nodes can pass data
        to each other by routes no static check sees."""
        if self.sim is None:
            return
        out_edges = self.out_edges
        sources = [(n, p) for n, nt in self.types.items() if out_edges[n] for p, spec in nt.outputs.items()
                   if spec.privileged and any(e[1] == p for e in out_edges[n])]  # only wired ones can leak
        if not sources:
            return
        writers: dict[str, set] = {}
        readers: dict[str, set] = {}
        for nid, nt in self.types.items():
            r, w = nt.state_cells(self.flat["nodes"][nid].get("config")) if (nt.state_read or nt.state_write) else ([], [])
            for cell in set(w) | self.writes.get(nid, set()):
                writers.setdefault(nid, set()).add(cell)
            for cell in set(r) | self.reads.get(nid, set()):
                readers.setdefault(cell, set()).add(nid)
        reported = set()
        for src, sport in sources:
            # BFS over nodes; `via` remembers how each tainted node was reached.
            via: dict[str, str] = {}
            queue = []
            for e in self.out_edges[src]:
                if e[1] == sport:
                    self._taint_edge(e, f"{src}.{sport}", via, queue, reported)
            for nid in queue:  # grows while it is read: breadth first
                for e in self.out_edges[nid]:
                    self._taint_edge(e, via[nid], via, queue, reported)
                for cell in writers.get(nid, ()):
                    for reader in readers.get(cell, ()):
                        if reader not in via and reader != self.sim:
                            via[reader] = f"{via[nid]} -> state:{cell} -> {reader}"
                            queue.append(reader)
            for nid in queue:
                if self.types[nid].name.startswith(CANDIDATE_NAMESPACE + ".") and ("candidate", nid) not in reported:
                    reported.add(("candidate", nid))
                    self.add("privileged_to_candidate",
                             f"privileged output {src}.{sport} reaches the candidate-authored node {nid!r} "
                             f"({self.types[nid].name}) via {via[nid]}",
                             "privileged outputs are ground truth for scoring only and never reach a node type "
                             "the candidate wrote; cut this path", node=nid, path=f"/nodes/{nid}")

    def _taint_edge(self, e, trail, via, queue, reported) -> None:
        s, sp, d, dp, _delayed, path = e
        if d == self.sim:
            key = (trail.split(" ")[0], dp)
            if key not in reported:
                reported.add(key)
                self.add("privileged_leak",
                         f"privileged output {trail.split(' ')[0]} reaches the simulator's action input {d}.{dp} "
                         f"via {trail} -> {s}.{sp} -> {d}.{dp}",
                         "privileged outputs are ground truth for scoring only; cut this path",
                         node=s, port=dp, path=path)
            return
        if d not in via:
            via[d] = f"{trail} -> {d}"
            queue.append(d)


_WIRING: dict[bytes, tuple] = {}  # wiring key -> (node types, results of check_wiring) of a problem-free wiring
_WIRING_LIMIT = 1024


def _wiring_key(flat: dict, edge_paths: list[str], types: dict[str, NodeType]) -> tuple[bytes | None, list]:
    """What the wiring checks depend on, as bytes: the flat edges, their source
    paths, each flat node's id and its type's identity (the NodeType objects
    are returned too, so that a hit can confirm them by identity)."""
    nodes = flat["nodes"]
    snapshot = [types.get(nid) for nid in nodes]
    try:
        key = marshal.dumps((flat["edges"], edge_paths, list(nodes), [id(t) for t in snapshot]), 2)
    except ValueError:  # values marshal cannot encode (not from JSON): no reuse
        return None, snapshot
    return key, snapshot


_PLAIN_FLOWS: dict[tuple[str, str], bool] = {}  # (src type, dst type) -> flows, both without type variables


def _plain_flow(src_text: str, dst_text: str) -> bool:
    """True when neither port type has type variables and src flows into dst
    (then no binding is involved and the edge is fine); False otherwise."""
    key = (src_text, dst_text)
    verdict = _PLAIN_FLOWS.get(key)
    if verdict is None:
        src_t, dst_t = T.parse(src_text), T.parse(dst_text)
        verdict = not T.has_typevars(src_t) and not T.has_typevars(dst_t) and T.flows(src_t, dst_t)
        if len(_PLAIN_FLOWS) < 65536:
            _PLAIN_FLOWS[key] = verdict
    return verdict


_REDUCER_NEEDS = {
    "append": "append/extend need a List[...] (or Any) cell",
    "extend": "append/extend need a List[...] (or Any) cell",
    "merge": "merge needs a Dict[...] or Map (or Any) cell",
    "add": "add/max/min need an Int, Float or Number (or Any) cell",
    "max": "add/max/min need an Int, Float or Number (or Any) cell",
    "min": "add/max/min need an Int, Float or Number (or Any) cell",
}


def _reducer_fits(reducer: str, t) -> bool:
    if reducer in ("append", "extend"):
        return T.is_list_like(t)
    if reducer == "merge":
        return T.is_dict_like(t)
    if reducer == "add":
        return T.is_numeric(t)
    if reducer in ("max", "min"):
        return T.is_numeric(t) or t[0] in ("Text",)
    return True


def _strongly_connected(nodes: list[str], succ: dict[str, list]) -> list[list[str]]:
    """Tarjan's algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            children = succ.get(v, [])
            if i < len(children):
                work.append((v, i + 1))
                w = children[i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                result.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return result

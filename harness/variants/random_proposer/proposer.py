"""The `random` variant: samples legal structured patches from the typed edit
alphabet. It needs no model, so it is both the offline demo and the baseline
every search variant should beat.

Moves: swap a node for another registered type of the same role whose ports fit
its wiring; set a config value within the type's config schema (agent nodes
only: the simulator's config defines the task); add an
optional node (one feeding an unconnected optional input) or remove one;
rewire an input to another compatible output. Every sampled patch is applied
and statically validated before it is returned; invalid ones are resampled.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.canvas import types as T
from harness.canvas.graph import split_endpoint
from harness.canvas.hashing import graph_hash
from harness.canvas.patch import PatchError, apply_patch
from harness.canvas.registry import COMPOSITE_TYPE, for_graph
from harness.canvas.validate import validate_graph
from harness.errors import UserError
from harness.rundir import proposal as proposal_md
from harness.fileio import read_json, write_json_atomic

MOVES = ("swap", "set_config", "add_node", "remove_node", "rewire")
MAX_TRIES = 200
_NO_VALUE = object()  # "this schema offers no other value"

# role of the node a move touches -> proposal axis (proposal_front_matter.schema.json)
ROLE_AXES = {
    "perception": "observation", "observation": "observation", "pose": "observation",
    "memory": "memory/state", "state": "memory/state", "map": "memory/state",
    "plan": "planning", "mission": "planning", "reasoning": "planning",
    "executor": "control/action gating", "control": "control/action gating", "action": "control/action gating",
    "policy": "control/action gating", "gating": "control/action gating",
    "stop": "stopping", "explor": "exploration", "prompt": "prompt", "model": "model configuration",
    "routing": "topology", "replanning": "control/action gating",
}


@dataclass
class Proposal:
    patch: dict
    graph: dict
    description: str
    axes: list[str]
    move: str
    tries: int
    rejected: list[str] = field(default_factory=list)


def axis_for(role: str | None) -> str:
    """The axis of a node's role: its own entry, else that of the first key the role
    contains ("planner" is planning), else topology."""
    role = (role or "").lower()
    if role in ROLE_AXES:  # ("replanning" holds "plan" but commits a chunk: control)
        return ROLE_AXES[role]
    for key, axis in ROLE_AXES.items():
        if key in role:
            return axis
    return "topology"


class _Wiring:
    """Port types of every node of a graph, resolved through its registry."""

    def __init__(self, graph: dict, registry):
        self.graph = graph
        self.registry = registry
        self.types = {}
        for node_id, node in (graph.get("nodes") or {}).items():
            nt = registry.get(node.get("type")) if node.get("type") != COMPOSITE_TYPE else None
            if nt is not None:
                self.types[node_id] = nt
        self.edges = list(graph.get("edges") or [])

    def incoming(self, node_id: str) -> list[dict]:
        return [e for e in self.edges if split_endpoint(e["to"])[0] == node_id]

    def outgoing(self, node_id: str) -> list[dict]:
        return [e for e in self.edges if split_endpoint(e["from"])[0] == node_id]

    def out_type(self, endpoint: str) -> str | None:
        node, port = split_endpoint(endpoint)
        nt = self.types.get(node)
        spec = nt.outputs.get(port) if nt else None
        return spec.type if spec else None

    def in_spec(self, endpoint: str):
        node, port = split_endpoint(endpoint)
        nt = self.types.get(node)
        return nt.inputs.get(port) if nt else None

    def outputs(self, exclude: str | None = None) -> list[tuple[str, str]]:
        """(endpoint, type) of every output port in the graph."""
        return [(f"{nid}.{port}", spec.type) for nid, nt in self.types.items() if nid != exclude
                for port, spec in nt.outputs.items()]


class RandomProposer:
    def __init__(self, seed: int | None = None, attempt: int = 0):
        self.rng = np.random.default_rng([seed if seed is not None else 0, attempt])

    def pick(self, items):
        items = list(items)
        return items[int(self.rng.integers(len(items)))] if items else None

    # -- moves: each returns (ops, description, role) or None when not applicable --

    def _swap(self, w: _Wiring):
        choices = []
        for node_id, nt in w.types.items():
            if nt.is_simulator or not nt.role:
                continue
            for other in w.registry.all():
                if other.name == nt.name or other.role != nt.role or other.is_simulator or other.name.startswith("core."):
                    continue
                if self._fits(w, node_id, other):
                    choices.append((node_id, nt, other))
        choice = self.pick(choices)
        if choice is None:
            return None
        node_id, nt, other = choice
        ops = [{"op": "retype_node", "id": node_id, "type": other.name, "config": {}}]
        return ops, f"swap {node_id}: {nt.name} -> {other.name}", nt.role

    @staticmethod
    def _fits(w: _Wiring, node_id: str, other) -> bool:
        for edge in w.incoming(node_id):
            port = split_endpoint(edge["to"])[1]
            src = w.out_type(edge["from"])
            if port not in other.inputs or src is None or not T.compatible(src, other.inputs[port].type):
                return False
        for edge in w.outgoing(node_id):
            port = split_endpoint(edge["from"])[1]
            dst = w.in_spec(edge["to"])
            if port not in other.outputs or dst is None or not T.compatible(other.outputs[port].type, dst.type):
                return False
        wired = {split_endpoint(e["to"])[1] for e in w.incoming(node_id)}
        return all(not spec.required or name in wired for name, spec in other.inputs.items())

    def _set_config(self, w: _Wiring):
        choices = []
        for node_id, nt in w.types.items():
            if nt.is_simulator:
                continue  # the simulator's config is the task (step caps, privileged outputs), not the agent
            current = (w.graph["nodes"][node_id].get("config") or {})
            for key, schema in (nt.config_schema.get("properties") or {}).items():
                value = self._sample_value(schema, current.get(key, schema.get("default")))
                if value is not _NO_VALUE:
                    choices.append((node_id, nt, key, value))
        choice = self.pick(choices)
        if choice is None:
            return None
        node_id, nt, key, value = choice
        ops = [{"op": "set_config", "id": node_id, "pointer": "/" + key.replace("~", "~0").replace("/", "~1"),
                "value": value}]
        return ops, f"set {node_id}.config.{key} = {json.dumps(value)}", nt.role

    def _sample_value(self, schema: dict, current):
        """A value the schema allows, different from the current one; bounded
        numbers only (an open bound is taken as twice the current value)."""
        if not isinstance(schema, dict):
            return _NO_VALUE
        kinds = schema.get("type")
        kinds = set(kinds) if isinstance(kinds, list) else {kinds}
        if "enum" in schema:
            options = [v for v in schema["enum"] if v != current]
            return self.pick(options) if options else _NO_VALUE
        if "boolean" in kinds:
            return not bool(current)
        if kinds & {"integer", "number"}:
            lo = schema.get("minimum", schema.get("exclusiveMinimum"))
            hi = schema.get("maximum", schema.get("exclusiveMaximum"))
            if lo is None and hi is None:
                return _NO_VALUE
            anchor = current if isinstance(current, (int, float)) and not isinstance(current, bool) else None
            lo = lo if lo is not None else (0 if anchor is None else min(0, anchor))
            hi = hi if hi is not None else max(lo + 8, 2 * anchor if anchor is not None else lo + 8)
            if "integer" in kinds:
                lo_i = int(lo) + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
                hi_i = int(hi) - (1 if "exclusiveMaximum" in schema and "maximum" not in schema else 0)
                options = [v for v in range(lo_i, hi_i + 1) if v != current]
                return int(self.pick(options)) if options else _NO_VALUE
            return round(float(self.rng.uniform(lo, hi)), 4)
        return _NO_VALUE

    def _add_node(self, w: _Wiring):
        choices = []
        for node_id, nt in w.types.items():
            wired = {split_endpoint(e["to"])[1] for e in w.incoming(node_id)}
            for port, spec in nt.inputs.items():
                if spec.required or port in wired:
                    continue
                for other in w.registry.all():
                    if other.is_simulator or other.name.startswith("core."):
                        continue
                    feeds = [o for o, s in other.outputs.items() if T.compatible(s.type, spec.type)]
                    if feeds:
                        choices.append((node_id, port, other, feeds))
        choice = self.pick(choices)
        if choice is None:
            return None
        node_id, port, other, feeds = choice
        new_id = self._fresh_id(w, other.name.rsplit(".", 1)[-1].lower())
        ops = [{"op": "add_node", "id": new_id, "type": other.name, "config": {}},
               {"op": "add_edge", "from": f"{new_id}.{self.pick(feeds)}", "to": f"{node_id}.{port}"}]
        outputs = w.outputs()
        for in_port, in_spec in other.inputs.items():
            sources = [ep for ep, t in outputs if T.compatible(t, in_spec.type)]
            if sources and (in_spec.required or self.rng.random() < 0.5):
                edge = {"op": "add_edge", "from": self.pick(sources), "to": f"{new_id}.{in_port}"}
                if split_endpoint(edge["from"])[0] not in self._simulators(w):
                    edge["delay"] = 1  # reading the current tick's outputs of an upstream node could close a cycle
                ops.append(edge)
        return ops, f"add {new_id} ({other.name}) feeding {node_id}.{port}", other.role

    def _remove_node(self, w: _Wiring):
        choices = []
        for node_id, nt in w.types.items():
            if nt.is_simulator:
                continue
            out = w.outgoing(node_id)
            if out and all((w.in_spec(e["to"]) is not None and not w.in_spec(e["to"]).required) for e in out):
                choices.append((node_id, nt))
        choice = self.pick(choices)
        if choice is None:
            return None
        node_id, nt = choice
        ops = [{"op": "remove_edge", "from": e["from"], "to": e["to"]} for e in w.incoming(node_id) + w.outgoing(node_id)]
        ops.append({"op": "remove_node", "id": node_id})
        return ops, f"remove optional node {node_id} ({nt.name})", nt.role

    def _rewire(self, w: _Wiring):
        choices = []
        for edge in w.edges:
            dst = w.in_spec(edge["to"])
            if dst is None:
                continue
            target_node = split_endpoint(edge["to"])[0]
            for endpoint, out_type in w.outputs(exclude=target_node):
                if endpoint != edge["from"] and T.compatible(out_type, dst.type):
                    choices.append((edge, endpoint))
        choice = self.pick(choices)
        if choice is None:
            return None
        edge, endpoint = choice
        ops = [{"op": "rewire_edge", "from": edge["from"], "to": edge["to"], "new_from": endpoint}]
        nt = w.types.get(target_node)
        return ops, f"rewire {edge['to']}: {edge['from']} -> {endpoint}", nt.role if nt else None

    @staticmethod
    def _simulators(w: _Wiring) -> set[str]:
        return {nid for nid, nt in w.types.items() if nt.is_simulator}

    @staticmethod
    def _fresh_id(w: _Wiring, stem: str) -> str:
        n = 1
        while f"{stem}{n}" in (w.graph.get("nodes") or {}):
            n += 1
        return f"{stem}{n}"

    # -- driver -------------------------------------------------------------------

    def propose(self, graph: dict, candidate_dir: Path | None = None, moves=MOVES,
                seen: set[str] = frozenset()) -> Proposal:
        """A statically valid edit of `graph` whose result is neither the parent
        nor any graph hash in `seen` (candidates already evaluated)."""
        registry = for_graph(graph, candidate_dir)
        wiring = _Wiring(graph, registry)
        parent_hash = graph_hash(graph)
        rejected: list[str] = []
        for tries in range(1, MAX_TRIES + 1):
            move = self.pick(moves)
            sampled = getattr(self, f"_{move}")(wiring)
            if sampled is None:
                continue
            ops, description, role = sampled
            patch = {"ops": ops}
            try:
                child = apply_patch(graph, patch)
            except PatchError as exc:
                rejected.append(f"{description}: patch failed: {exc}")
                continue
            child_hash = graph_hash(child)
            if child_hash == parent_hash or child_hash in seen:
                rejected.append(f"{description}: already evaluated in this run")
                continue
            try:
                errors = [p for p in validate_graph(child, registry=registry, candidate_dir=candidate_dir)
                          if p.severity == "error"]
            except Exception as exc:  # a sample the validator cannot judge is not a legal edit
                rejected.append(f"{description}: validation crashed: {type(exc).__name__}: {exc}")
                continue
            if errors:
                rejected.append(f"{description}: {errors[0].code}: {errors[0].message}")
                continue
            axes = [axis_for(role)]
            if move in ("add_node", "remove_node", "rewire") and "topology" not in axes:
                axes.append("topology")
            return Proposal(patch, child, description, axes, move, tries, rejected[-5:])
        raise UserError(f"random proposer: no statically valid edit found in {MAX_TRIES} samples"
                        + (f" (last rejection: {rejected[-1]})" if rejected else ""))


def propose_into(staging: Path, seed: int | None, attempt: int, seen: set[str] = frozenset()) -> Proposal:
    """Edit the staged candidate in place and fill in proposal.md."""
    candidate = staging / "candidate"
    graph = read_json(candidate / "graph.json", "graph")
    result = RandomProposer(seed, attempt).propose(graph, candidate, seen=seen)
    write_json_atomic(candidate / "graph.json", result.graph)
    write_json_atomic(staging / "proposed_patch.json", result.patch)
    meta, _ = proposal_md.read(staging / "proposal.md")
    body = (f"\nRandom edit ({result.move}), sampled with seed {seed}, attempt {attempt}; "
            f"{result.tries} sample(s) drawn, the statically invalid ones rejected before any rollout.\n")
    if result.rejected:
        body += "\nRejected samples (last few):\n" + "".join(f"- {r}\n" for r in result.rejected)
    proposal_md.write(staging / "proposal.md", dict(meta, description=result.description, axes=result.axes), body)
    return result

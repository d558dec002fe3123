"""VoxPoser's LMP chain on LIBERO as node types: `libero.LMP` (programs written by
the pinned model) and `libero.ScriptedLMP` (programs from a fixed table), one node
per LMP of upstream's chain - planner, composer, parse_query_obj and the value-map
LMPs (affordance, avoidance, rotation, velocity, gripper).

Every LMP node emits a handle (`lmp`) each tick; a node receiving a handle on one of
its `lmp_<kind>` ports may call that LMP from its program (`composer(q)`,
`parse_query_obj(q)`, `get_affordance_map(q)`, ...): the call is dispatched at run
time inside the caller's program, never along a graph edge. The root (the LMP given
a `query`) runs its program as a coroutine of the graph (executors/libero/chain.py):
each `execute()` of a composer hands one motion out on the root's `motion` port and
waits until the path planner reports it done (`progress`, wired back with a delay).

Self-report: the root logs, per firing, the chain's model calls made during it
(`calls`: node, LMP kind, request id) and the dispatched sub-LMP calls
(`dispatched`). Under the `logging_fault` probe the dispatched calls (and the model
calls they made) are left out of that report; nothing else changes.
"""

from __future__ import annotations

import json
import re

import numpy as np
from scipy.spatial.transform import Rotation

from executors.libero.chain import Coroutine, MapFunction, ObjectView, Trace, detected, gripper_detected
from harness.canvas.registry import Node, node_type
from harness.embodied import voxels
from harness.embodied.lmp import PROGRAM_PROMPT_CONFIG, LMPError, model_program, run_program
from harness.models.prompts import read_candidate_file

CALL_NAMES = {"composer": "composer", "parse_query_obj": "parse_query_obj", "affordance": "get_affordance_map",
              "avoidance": "get_avoidance_map", "rotation": "get_rotation_map", "velocity": "get_velocity_map",
              "gripper": "get_gripper_map"}
KINDS = ("planner", *CALL_NAMES)
VALUE_MAPS = ("affordance", "avoidance", "rotation", "velocity", "gripper")
SUB_PORTS = {f"lmp_{kind}": kind for kind in CALL_NAMES}
OPEN, CLOSED = 1.0, 0.0  # gripper-map values (VoxPoser's convention)
DEFAULT_VOXELS = 100  # upstream's map_size
EE_ALIASES = ("gripper", "ee", "end effector", "end_effector", "hand")


class LMPHandle:
    """What an LMP node emits: calling it dispatches a query to that node's LMP."""

    def __init__(self, node: "_LMPNode"):
        self.node = node

    def call(self, query: str, trace: Trace, depth: int):
        return self.node.dispatch(str(query), trace, depth)

    def __repr__(self) -> str:
        return f"LMPHandle({self.node.node_id}: {self.node.kind})"

    def log_value(self) -> dict:
        """What the episode log records: the LMP this handle dispatches to."""
        return {"lmp": self.node.node_id, "kind": self.node.kind}


_INPUTS = {
    "query": {"type": "Text", "required": False, "doc": "the root query (the task instruction): the LMP given it "
                                                       "is the root and runs once per episode"},
    "objects": {"type": "Objects", "required": False, "doc": "the scene `detect` reads (ground truth)"},
    "gripper": {"type": "Gripper", "required": False, "doc": "end-effector state (`detect('gripper')`)"},
    "workspace": {"type": "Workspace", "required": False, "doc": "the voxel grid's box"},
    "progress": {"type": "Any", "required": False,
                 "doc": "root only, from the path planner (delay 1): {'motion': id, 'done': bool}"},
    **{port: {"type": "LMP", "required": False, "doc": f"handle of the {kind} LMP, callable in this node's "
                                                         f"programs as `{CALL_NAMES[kind]}(query)`"}
       for port, kind in SUB_PORTS.items()},
}
_OUTPUTS = {"lmp": {"type": "LMP", "doc": "handle other LMPs dispatch to this one through"},
            "motion": {"type": "Motion", "doc": "root only: the motion its chain's execute() hands out, then "
                                                "{'final': true} once the program has returned"}}
_CONFIG = {
    "kind": {"enum": list(KINDS), "description": "which LMP of the chain this is (decides its functions)"},
    "voxels": {"type": "integer", "minimum": 10, "maximum": 100, "default": DEFAULT_VOXELS,
               "description": "voxels per axis of the value maps (upstream: 100)"},
}


class _LMPNode(Node):
    """What the model-written and the scripted LMP share: handles, dispatch, the
    functions a program sees, the root coroutine and the self-report."""

    def setup(self) -> None:
        self.kind = self.config["kind"]
        self.handle = LMPHandle(self)
        self._texts: dict[str, str] = {}
        self.run: Trace | None = None

    def reset(self, ctx) -> None:
        self._stop()
        self.ctx = ctx
        self.scene: dict = {}
        self.gripper: dict | None = None
        self.grid: voxels.Grid | None = None
        self._bounds = None
        self.waiting: int | None = None
        self.finished = False
        self.handles: dict = {}

    def close(self) -> None:
        self._stop()

    def _stop(self) -> None:
        if self.run is not None:
            self.run.coroutine.cancel()
            self.run = None

    # -- each tick --------------------------------------------------------------
    def step(self, inputs: dict, ctx) -> dict:
        self.handles = {port: inputs[port] for port in SUB_PORTS if port in inputs}
        self.scene = inputs.get("objects") or self.scene
        self.gripper = inputs.get("gripper") or self.gripper
        bounds = inputs.get("workspace")
        if bounds is not None and bounds != self._bounds:
            self._bounds = bounds
            self.grid = voxels.Grid(self.config["voxels"], bounds["min"], bounds["max"])
        out = {"lmp": self.handle}
        if "query" not in inputs or self.finished:
            return out
        try:
            request = self._advance(inputs)
        finally:
            if self.run is not None:
                self._report(ctx)
        if request is None:
            self.finished = True
            out["motion"] = {"final": True}
        elif request is not False:
            self.waiting = request["id"]
            out["motion"] = request
        return out

    def _advance(self, inputs: dict):
        """The root's next motion, None when its program has returned, False while a motion runs."""
        if self.run is None:
            query = inputs["query"]
            self.run = trace = Trace(Coroutine(lambda co: self.dispatch(query, trace, 0)))
            return trace.coroutine.start()
        progress = inputs.get("progress") or {}
        if self.waiting is not None and progress.get("motion") == self.waiting and progress.get("done"):
            self.waiting = None
            return self.run.coroutine.resume()
        return False

    def _report(self, ctx) -> None:
        calls, dispatched = self.run.take()
        fault = bool(ctx.probes.get("logging_fault"))
        if fault:
            calls, dispatched = [c for c in calls if c["depth"] == 0], []
        fields = {}
        if calls:
            fields["calls"] = [{k: c[k] for k in ("node", "lmp", "request_id")} for c in calls]
        if dispatched:
            fields["dispatched"] = dispatched
        if fields:
            ctx.log(**fields)

    # -- one LMP call -----------------------------------------------------------
    def dispatch(self, query: str, trace: Trace, depth: int):
        """Run this LMP on `query` as upstream does: planner and composer programs run now;
        parse_query_obj and the value maps return functions evaluated on the latest scene."""
        if depth > 0:
            trace.dispatched.append({"node": self.node_id, "lmp": self.kind, "query": query, "depth": depth})
        source, bound = self._program(query, trace, depth)
        where = f"{self.node_id} ({self.kind}) on {query!r}"

        def evaluate():
            return run_program(source, {**self._functions(trace, depth), **bound}, where, trace.coroutine.budget)

        if self.kind == "parse_query_obj":
            return ObjectView(evaluate, query)
        if self.kind in VALUE_MAPS:
            return MapFunction(lambda: self._checked_map(evaluate(), where), self.kind, query)
        return evaluate()

    def _program(self, query: str, trace: Trace, depth: int) -> tuple[str, dict]:
        """(program source, names it binds) for a query."""
        raise NotImplementedError

    def _checked_map(self, value, where: str) -> np.ndarray:
        n = self._grid().n
        shape = (n, n, n, 4) if self.kind == "rotation" else (n, n, n)
        if value is None:
            raise LMPError(f"{where}: the program assigned no ret_val")
        array = np.asarray(value, dtype=np.float32)
        if array.shape != shape:
            raise LMPError(f"{where}: a {self.kind} map must have shape {shape}, got {array.shape}")
        return array

    def _grid(self) -> voxels.Grid:
        if self.grid is None:
            raise LMPError(f"{self.node_id}: no workspace wired to this LMP (its maps need the voxel grid)")
        return self.grid

    # -- what a program may call ------------------------------------------------
    def _functions(self, trace: Trace, depth: int) -> dict:
        functions = {"np": voxels.numpy_helpers(), "objects": sorted(self.scene)}
        for port, kind in SUB_PORTS.items():
            handle = self.handles.get(port)
            if handle is not None:
                functions[CALL_NAMES[kind]] = (lambda q, h=handle: h.call(q, trace, depth + 1))
        if self.kind == "parse_query_obj":
            functions["detect"] = self._detect
        if self.kind == "composer":
            functions["execute"] = lambda movable, **maps: self._execute(trace, movable, maps)
            functions["reset_to_default_pose"] = lambda: self._hand_out(trace, {"movable": "gripper", "home": True})
        if self.kind in VALUE_MAPS:
            grid = self._grid()
            functions.update(empty_map=lambda fill=0.0: grid.empty(fill),
                             ball=lambda position, radius_cm: grid.ball(position, radius_cm / 100.0),
                             voxel=grid.to_voxel, OPEN=OPEN, CLOSED=CLOSED)
        if self.kind == "rotation":
            functions.update(empty_rotation_map=self._empty_rotation_map, euler_to_quat=euler_to_quat,
                             quat_multiply=quat_multiply)
        return functions

    def _detect(self, name: str) -> dict:
        name = str(name)
        if name.lower() in EE_ALIASES:
            if self.gripper is None:
                raise LMPError(f"{self.node_id}: no gripper state wired to this LMP")
            return gripper_detected(self.gripper)
        if name not in self.scene:
            raise LMPError(f"{self.node_id}: detect({name!r}): no such object (scene: {sorted(self.scene)})")
        return detected(name, self.scene[name])

    def _empty_rotation_map(self) -> np.ndarray:
        n = self._grid().n
        quat = self.gripper["quaternion"] if self.gripper else (0.0, 0.0, 0.0, 1.0)
        return np.broadcast_to(np.asarray(quat, np.float32), (n, n, n, 4)).copy()

    def _execute(self, trace: Trace, movable, maps: dict) -> None:
        unknown = set(maps) - {f"{kind}_map" for kind in VALUE_MAPS}
        if unknown:
            raise LMPError(f"execute() got unknown map(s) {sorted(unknown)}")
        name = getattr(movable, "name", None) if not isinstance(movable, dict) else movable.get("name")
        motion = {"movable": str(name or "gripper")}
        for key, value in maps.items():
            if value is not None:
                motion[key[:-4]] = np.asarray(value() if callable(value) else value, dtype=np.float32)
        if self.gripper is not None:
            motion["quaternion"] = list(self.gripper["quaternion"])  # the default rotation: the current one
        self._hand_out(trace, motion)

    def _hand_out(self, trace: Trace, motion: dict) -> None:
        trace.motions += 1
        trace.coroutine.suspend(dict(motion, id=trace.motions))



def euler_to_quat(rx: float, ry: float, rz: float) -> np.ndarray:
    """Quaternion (x, y, z, w) of extrinsic x-y-z Euler angles in radians."""
    return Rotation.from_euler("xyz", [rx, ry, rz]).as_quat()


def quat_multiply(a, b) -> np.ndarray:
    """a * b of two quaternions (x, y, z, w): rotation b, then a."""
    return (Rotation.from_quat(a) * Rotation.from_quat(b)).as_quat()
@node_type(
    "libero.LMP", inputs=_INPUTS, outputs=_OUTPUTS,
    config_schema={"type": "object", "required": ["kind", "prompt"], "additionalProperties": False,
                   "properties": {**_CONFIG, **PROGRAM_PROMPT_CONFIG}},
    role="planning", uses_model=True,
    doc="A language-model program of VoxPoser's chain on LIBERO: the pinned model writes Python for each query "
        "(one call per dispatch), run in a restricted sandbox exposing only this LMP's functions; sub-LMP calls "
        "are dispatched at run time; the root's execute() calls suspend it until the motion is done.",
)
class LMP(_LMPNode):
    """One language-model program (LMP) of VoxPoser's chain. Every tick it emits a handle
    (`lmp`) and keeps this tick's `objects`, `gripper` and `workspace` (the latest scene
    its programs read). Each dispatch of a query - the root's, or a caller's
    `composer(q)`, `parse_query_obj(q)`, `get_<kind>_map(q)` - renders the `prompt`
    template (and the optional `system_prompt`) with {{query}}, {{objects}} (sorted
    names, 'none' when empty) and {{kind}} (any other placeholder is an error) and makes
    one model call; the program is the reply's first fenced block, else the whole reply.
    As upstream: planner and composer programs run at once; `parse_query_obj` returns a
    view whose attributes (name, kind, position, quaternion, aabb, size) re-run its
    program on the latest scene each time they are read, and a value-map LMP returns a
    function that re-runs its program on the latest scene when called (no new model
    call). Programs run restricted (no imports, no names starting with '_', no
    eval/exec/open/getattr, no classes, while loops or generators; writes only to dicts,
    lists and arrays; at most 2,000,000 loop iterations and 5 s of running time, not
    counting time suspended in execute()). Every program sees `np` (array helpers only),
    `objects` (scene names) and a function per wired sub-LMP; `kind: parse_query_obj`
    adds `detect(name)` (the ground-truth object: privileged perception; 'gripper',
    'ee', 'end effector', 'hand' name the end effector; an unknown name is an error);
    `kind: composer` adds `execute(movable, affordance_map=, avoidance_map=,
    rotation_map=, velocity_map=, gripper_map=)` (each a map or a function returning
    one; another keyword is an error) and `reset_to_default_pose()`, each handing one
    motion to the root's `motion` port and returning once the path planner reports it
    done; value-map kinds add `empty_map(fill=0.0)`, `ball(position, radius_cm)`
    (boolean mask, at least the voxel holding the position), `voxel(position)` (index)
    and OPEN = 1.0, CLOSED = 0.0; `kind: rotation` adds `empty_rotation_map()` (every
    voxel the current end-effector quaternion x, y, z, w), `euler_to_quat(rx, ry, rz)`
    and `quat_multiply(a, b)`. A value map must have shape voxels^3 (rotation:
    voxels^3 x 4) on this node's grid, else an error. The root (the node given `query`)
    runs once per episode; after its program returns it emits {'final': true} once. A
    rejected program, any exception in it, a missing pinned model or prompt file is not
    caught or retried: a node error that ends the episode."""

    def _program(self, query: str, trace: Trace, depth: int) -> tuple[str, dict]:
        values = {"query": query, "objects": ", ".join(sorted(self.scene)) or "none", "kind": self.kind}
        program, request_id = model_program(self.node_id, self.ctx, self.config, self._text, values)
        trace.calls.append({"node": self.node_id, "lmp": self.kind, "request_id": request_id, "depth": depth})
        return program, {}

    def _text(self, key: str) -> str:
        if key not in self._texts:
            self._texts[key] = read_candidate_file(self.ctx.candidate_dir, self.config[key])
        return self._texts[key]


_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


def program_table(text: str, where: str) -> dict:
    """A programs file: key -> (template pattern or None, program text)."""
    try:
        table = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LMPError(f"{where}: not JSON: {exc}") from None
    if not isinstance(table, dict) or not all(isinstance(v, (str, list)) for v in table.values()):
        raise LMPError(f"{where}: must be a JSON object of query -> program (a string or a list of lines)")
    return {key: (_template(key) if _PLACEHOLDER.search(key) else None,
                  "\n".join(lines) + "\n" if isinstance(lines, list) else lines) for key, lines in table.items()}


def lookup(table: dict, query: str) -> tuple[str, dict] | None:
    """(program, the placeholders' values) for a query: the exact key, else the first matching template."""
    if query in table:
        return table[query][1], {}
    for pattern, program in table.values():
        match = pattern.fullmatch(query.strip()) if pattern is not None else None
        if match:
            return program, match.groupdict()
    return None


def _template(key: str) -> re.Pattern:
    parts, last = [], 0
    for match in _PLACEHOLDER.finditer(key):
        parts.append(re.escape(key[last:match.start()]) + f"(?P<{match.group(1)}>.+?)")
        last = match.end()
    return re.compile("".join(parts) + re.escape(key[last:]) + r"\.?", re.I)


@node_type(
    "libero.ScriptedLMP", inputs=_INPUTS, outputs=_OUTPUTS,
    config_schema={"type": "object", "required": ["kind", "programs"], "additionalProperties": False,
                   "properties": {**_CONFIG,
                                  "programs": {"type": "string",
                                               "description": "candidate JSON file: query or query template -> "
                                                              "program (a string or a list of lines)"}}},
    role="planning",
    doc="An LMP of VoxPoser's chain whose programs come from a fixed table (query or template -> program; no "
        "model); a query no entry matches is a node error. Same dispatch, functions and coroutine as libero.LMP.",
)
class ScriptedLMP(_LMPNode):
    """The same LMP as `libero.LMP` (handle, latest scene, dispatch, the functions each
    kind sees, the root's coroutine and self-report) except that no model is called:
    the program for a query comes from the candidate JSON file `programs` (key -> program
    text, or a list of lines joined with newlines), read on first use and kept. A key is
    either the exact query or a template with {name} placeholders (lower-case
    identifiers): the exact key wins, else the first template (in file order) matching
    the whole query (case-insensitive, an optional final '.'), each placeholder matching
    the shortest text that fits and bound in the program as a string variable of that
    name. A file that is not a JSON object of strings or lists, a query no key matches,
    or an error while the program runs is a node error that ends the episode."""

    def _program(self, query: str, trace: Trace, depth: int) -> tuple[str, dict]:
        if not hasattr(self, "_table"):
            self._table = program_table(read_candidate_file(self.ctx.candidate_dir, self.config["programs"]),
                                        self.config["programs"])
        found = lookup(self._table, query)
        if found is None:
            raise LMPError(f"{self.node_id}: no scripted {self.kind} program for query {query!r} "
                           f"(keys: {list(self._table)[:8]})")
        return found

"""The VoxPoser chain as node types: LMP nodes (planner, composer and the value-map
LMPs) -> `manipulation.VoxelPlanner` (greedy path on the voxel value maps) ->
`manipulation.VoxelController` (end-effector delta actions).

An LMP node emits a *handle* (`lmp` port) every tick. The node that receives a
handle on one of its `lmp_*` ports may call that LMP from its program: the call
is dispatched at run time, inside the caller's firing, not along a graph edge.
The root LMP (the one given a `query`) runs once per episode; its program
dispatches the rest of the chain, and every `execute(...)` its composer calls
queues one motion, emitted on `motions`.

Self-report: the root LMP logs every model call of the chain (`self.calls`,
each with the node that made it) and the dispatched sub-LMP calls
(`self.dispatched`). Under the `logging_fault` probe (executor profile
`probes.logging_fault`) the dispatched calls are left out of that report;
nothing else changes.
"""

from __future__ import annotations

import json

import numpy as np

from harness.canvas.registry import Node, node_type
from harness.embodied import voxels
from harness.embodied.lmp import PROGRAM_PROMPT_CONFIG, LMPError, model_program, run_program
from harness.models.prompts import read_candidate_file

# LMP kind -> the name its callers use for it
CALL_NAMES = {"composer": "composer", "affordance": "get_affordance_map", "avoidance": "get_avoidance_map",
              "rotation": "get_rotation_map", "velocity": "get_velocity_map", "gripper": "get_gripper_map"}
KINDS = ("planner", *CALL_NAMES)
VALUE_MAPS = ("affordance", "avoidance", "rotation", "velocity", "gripper")
SUB_PORTS = {f"lmp_{kind}": kind for kind in CALL_NAMES}
GRIPPER_OPEN, GRIPPER_CLOSED = 1.0, 0.0  # value-map convention (VoxPoser's): 1 open, 0 closed


class Trace:
    """One root run of the chain: model calls, dispatched sub-LMP calls, queued motions."""

    def __init__(self):
        self.calls: list[dict] = []
        self.dispatched: list[dict] = []
        self.motions: list[dict] = []


class LMPHandle:
    """What an LMP node emits: calling it runs that node's LMP on a query."""

    def __init__(self, node: "_LMPNode", sub_handles: dict, objects: dict, gripper: dict | None):
        self.node, self.sub_handles, self.objects, self.gripper = node, sub_handles, objects, gripper

    def run(self, query: str, trace: Trace, depth: int):
        return self.node.run_query(query, self, trace, depth)

    def log_value(self) -> dict:
        """What the episode log records: the LMP this handle calls."""
        return {"lmp": self.node.node_id, "kind": self.node.kind}


_LMP_INPUTS = {
    "query": {"type": "Text", "required": False,
              "doc": "the root query (the instruction); the root runs once per episode"},
    "objects": {"type": "Objects", "required": False, "doc": "scene objects (positions, sizes)"},
    "gripper": {"type": "Gripper", "required": False, "doc": "end-effector state"},
    **{port: {"type": "LMP", "required": False, "doc": f"handle of the {kind} LMP this program may call as "
                                                         f"`{CALL_NAMES[kind]}(query)`"}
       for port, kind in SUB_PORTS.items()},
}
_LMP_OUTPUTS = {"lmp": {"type": "LMP", "doc": "handle other LMPs call this one through"},
                "motions": {"type": "List[Motion]", "doc": "the motions the chain queued (root only, once)"}}
_LMP_CONFIG = {
    "kind": {"enum": list(KINDS), "description": "which LMP of the chain this is (decides its functions)"},
    "voxels": {"type": "integer", "minimum": 10, "maximum": 100, "default": 40,
               "description": "voxels per axis of the value maps"},
}


class _LMPNode(Node):
    """What the model-written and the scripted LMP share: handles, dispatch, sandbox, self-report."""

    def setup(self) -> None:
        self.kind = self.config["kind"]
        self.grid = voxels.Grid(self.config["voxels"])
        self._table: dict | None = None
        self._texts: dict[str, str] = {}

    def reset(self, ctx) -> None:
        self.ctx = ctx
        self.ran = False

    def step(self, inputs: dict, ctx) -> dict:
        subs = {SUB_PORTS[port]: handle for port, handle in inputs.items() if port in SUB_PORTS}
        handle = LMPHandle(self, subs, inputs.get("objects") or {}, inputs.get("gripper"))
        out = {"lmp": handle}
        if "query" in inputs and not self.ran:
            self.ran = True
            trace = Trace()
            try:
                handle.run(inputs["query"], trace, 0)
            finally:
                self._report(trace, ctx)
            out["motions"] = trace.motions
        return out

    def _report(self, trace: Trace, ctx) -> None:
        """The voluntary self-report of this root firing."""
        fault = bool(ctx.probes.get("logging_fault"))
        calls = [c for c in trace.calls if not (fault and c["depth"] > 0)]
        fields = {"calls": [{k: c[k] for k in ("node", "lmp", "request_id")} for c in calls]}
        if not fault:
            fields["dispatched"] = trace.dispatched
        ctx.log(**fields)

    # -- one LMP call -----------------------------------------------------------
    def run_query(self, query: str, handle: LMPHandle, trace: Trace, depth: int):
        if depth > 0:
            trace.dispatched.append({"node": self.node_id, "lmp": self.kind, "query": query, "depth": depth})
        source = self._program(query, handle, trace, depth)
        functions = self._functions(handle, trace, depth)
        return run_program(source, functions, where=f"{self.node_id} ({self.kind}) on {query!r}")

    def _program(self, query: str, handle: "LMPHandle", trace: Trace, depth: int) -> str:
        raise NotImplementedError

    # -- what a program may call ---------------------------------------------------
    def _functions(self, handle: LMPHandle, trace: Trace, depth: int) -> dict:
        functions = {"np": voxels.numpy_helpers(), "parse_query_obj": lambda name: self._object(handle, name)}
        for kind, sub in handle.sub_handles.items():
            functions[CALL_NAMES[kind]] = (lambda q, sub=sub: sub.run(q, trace, depth + 1))
        if self.kind == "composer":
            functions["execute"] = lambda movable, **maps: self._execute(trace, movable, maps)
        if self.kind in VALUE_MAPS:
            grid = self.grid
            functions.update(
                empty_map=lambda fill=0.0: grid.empty(fill),
                ball=lambda position, radius_cm: grid.ball(position, radius_cm / 100.0),
                OPEN=GRIPPER_OPEN, CLOSED=GRIPPER_CLOSED)
        return functions

    def _object(self, handle: LMPHandle, name: str) -> dict:
        if name == "gripper":
            if handle.gripper is None:
                raise LMPError(f"{self.node_id}: no gripper state wired to this LMP")
            return {"name": "gripper", "position": np.array(handle.gripper["position"]), "size": 0.0}
        if name not in handle.objects:
            raise LMPError(f"{self.node_id}: no object {name!r} in the scene (objects: {sorted(handle.objects)})")
        found = handle.objects[name]
        return {"name": name, "position": np.array(found["position"]), "size": float(found["size"])}

    def _execute(self, trace: Trace, movable: dict, maps: dict) -> None:
        unknown = set(maps) - {f"{kind}_map" for kind in VALUE_MAPS}
        if unknown:
            raise LMPError(f"execute() got unknown map(s) {sorted(unknown)}")
        for key, value in maps.items():
            if key != "rotation_map" and value is not None and np.shape(value) != (self.grid.n,) * 3:
                raise LMPError(f"execute({key}=...) must be a {self.grid.n}^3 value map, got shape {np.shape(value)}")
        trace.motions.append({"movable": movable.get("name", "gripper") if isinstance(movable, dict) else "gripper",
                              **{key[:-4]: value for key, value in maps.items() if value is not None}})


@node_type(
    "manipulation.LMP", inputs=_LMP_INPUTS, outputs=_LMP_OUTPUTS,
    config_schema={"type": "object", "required": ["kind", "prompt"], "additionalProperties": False,
                   "properties": {**_LMP_CONFIG, **PROGRAM_PROMPT_CONFIG}},
    role="planning", uses_model=True,
    doc="A language-model program of the VoxPoser chain: the pinned model writes Python for each query, which "
        "runs in a restricted sandbox exposing only its sub-LMPs and numpy-like helpers; sub-LMP calls are "
        "dispatched at run time.",
)
class LMP(_LMPNode):
    """One language-model program (LMP) of the VoxPoser chain. Every tick it emits a handle
    (`lmp`) carrying this tick's `objects` (empty when not wired), `gripper` (none when not
    wired) and the handles arriving on its `lmp_*` ports. When `query` arrives and this
    node has not run yet in the episode, it runs as the root, once: each run of a query
    (the root's, or one dispatched to it by a caller) renders the `prompt` template (and
    the optional `system_prompt`) with {{query}}, {{objects}} (sorted names, 'none' when
    empty) and {{kind}} - any other placeholder is an error - and makes one model call; a
    sub-LMP called twice calls the model twice. The program is the reply's first
    ```python / ```py / ``` fenced block, else the whole reply. It runs in a restricted
    sandbox (no imports, no names starting with '_', no eval/exec/open/getattr and the
    like, no classes, while loops or generators, writes only to dicts, lists and arrays;
    at most 2,000,000 loop iterations, a 5 s deadline checked while iterating). In
    scope: `np` (array helpers only), `parse_query_obj(name)` ({name, position, size} of
    a scene object, or of 'gripper'; an unknown name is an error) and,
    per wired sub-LMP, `composer(q)`, `get_affordance_map(q)`, `get_avoidance_map(q)`,
    `get_rotation_map(q)`, `get_velocity_map(q)`, `get_gripper_map(q)`, each returning
    that LMP's `ret_val` (None when the program does not assign it). `kind: composer` adds
    `execute(movable, affordance_map=..., avoidance_map=..., rotation_map=...,
    velocity_map=..., gripper_map=...)`, which queues one motion; another map name, or a
    non-rotation map that is not `voxels`^3, is an error. The value-map kinds add
    `empty_map(fill=0.0)`, `ball(position, radius_cm)` (a boolean mask, at least the
    voxel holding the position) and OPEN = 1.0, CLOSED = 0.0. The root emits the queued
    motions on `motions` once, after its program returns. A rejected program, any
    exception in it, a missing pinned model or prompt file is not caught or retried: it
    is a node error that ends the episode, and no motions are emitted. The root logs the
    chain's model calls and dispatched sub-LMP calls."""

    def _program(self, query: str, handle: "LMPHandle", trace: Trace, depth: int) -> str:
        values = {"query": query, "objects": ", ".join(sorted(handle.objects)) or "none", "kind": self.kind}
        program, request_id = model_program(self.node_id, self.ctx, self.config, self._text, values)
        trace.calls.append({"node": self.node_id, "lmp": self.kind, "request_id": request_id, "depth": depth})
        return program

    def _text(self, key: str) -> str:
        if key not in self._texts:
            self._texts[key] = read_candidate_file(self.ctx.candidate_dir, self.config[key])
        return self._texts[key]


@node_type(
    "manipulation.ScriptedLMP", inputs=_LMP_INPUTS, outputs=_LMP_OUTPUTS,
    config_schema={"type": "object", "required": ["kind", "programs"], "additionalProperties": False,
                   "properties": {**_LMP_CONFIG,
                                  "programs": {"type": "string",
                                               "description": "candidate JSON file: query -> program (a string "
                                                              "or a list of lines)"}}},
    role="planning",
    doc="An LMP of the VoxPoser chain whose programs come from a fixed table (query -> program; no model); "
        "an unknown query is a node error. Same sandbox and run-time dispatch as manipulation.LMP.",
)
class ScriptedLMP(_LMPNode):
    """The same LMP as `manipulation.LMP` (handle, once-per-episode root run, dispatch,
    sandbox, functions, `execute` checks, motions) except that no model is called: the
    program for a query is looked up, by exact string match, in the candidate JSON file
    `programs` (query -> program text, or a list of lines joined with newlines), read and
    parsed once on first use and kept for the node's lifetime. A file that is not JSON,
    a query the table does not hold, or an error while the program runs is a node error
    that ends the episode (nothing is retried, no motions are emitted)."""

    def _program(self, query: str, handle: "LMPHandle", trace: Trace, depth: int) -> str:
        table = self._programs()
        if query not in table:
            raise LMPError(f"{self.node_id}: no scripted {self.kind} program for query {query!r} "
                           f"(known: {sorted(table)[:8]})")
        return table[query]

    def _programs(self) -> dict:
        if self._table is None:
            text = read_candidate_file(self.ctx.candidate_dir, self.config["programs"])
            try:
                table = json.loads(text)
            except json.JSONDecodeError as exc:
                raise LMPError(f"{self.config['programs']}: not JSON: {exc}") from None
            self._table = {query: "\n".join(lines) + "\n" if isinstance(lines, list) else lines
                           for query, lines in table.items()}
        return self._table


@node_type(
    "manipulation.VoxelPlanner",
    inputs={"motions": {"type": "List[Motion]", "required": False, "doc": "motions to run, in order (replaces the queue)"},
            "gripper": {"type": "Gripper", "doc": "end-effector state"}},
    outputs={"waypoints": {"type": "Waypoints",
                           "doc": "{'points': [[x,y,z], ...] m, 'gripper': -1 open / +1 close, 'speed': 0-1}"},
             "progress": {"type": "Any", "doc": "{'motion': index, 'of': count, 'done': bool}"}},
    config_schema={
        "type": "object", "additionalProperties": False,
        "properties": {
            "voxels": {"type": "integer", "minimum": 10, "maximum": 100, "default": 40},
            "avoidance_weight": {"type": "number", "minimum": 0, "default": 2.0,
                                 "description": "cost of an avoidance value of 1, relative to 1 m of distance"},
            "tolerance_m": {"type": "number", "exclusiveMinimum": 0, "default": 0.012,
                            "description": "a motion is done when the end effector is this close to its target"},
            "gripper_ticks": {"type": "integer", "minimum": 1, "default": 12,
                              "description": "ticks a gripper-only motion (no affordance map) lasts"},
            "max_ticks_per_motion": {"type": "integer", "minimum": 1, "default": 80,
                                     "description": "a motion is abandoned (the next one starts) after this"},
        },
    },
    role="planning",
    doc="Greedy path planner on the voxel value maps: per tick, descends the cost (distance to the affordance "
        "map's best voxels + weighted, blurred avoidance) from the end effector's voxel; advances through the "
        "queued motions when the target is reached, a gripper-only motion has run its ticks, or time runs out.",
)
class VoxelPlanner(Node):
    """Runs the queued motions one after another and emits, per tick, the path for the
    current one. A `motions` input that arrives (even empty) replaces the queue and starts
    again at its first motion; the gripper command is kept. Starting a motion with an
    affordance map: the target is the centroid of the map's maximal voxels, and the cost
    of a voxel is its distance to the nearest maximal voxel (normalised to 0-1), plus
    `avoidance_weight` x the avoidance map's positive voxels blurred (Gaussian, 1.5 voxels,
    peak 1). An affordance map with no distinct maximum (e.g. all zeros) makes every voxel
    a target: the target is the workspace centre. A motion without an affordance map is
    gripper-only: it holds the end effector where it was when the motion started. A motion
    is finished when `max_ticks_per_motion` ticks have passed, a gripper-only motion after
    `gripper_ticks` ticks, otherwise when the end effector is within `tolerance_m` of the
    target (checked before its first tick too, so several motions can finish in one tick).
    The path is a greedy descent over the 26 neighbouring voxels from the end effector's
    voxel while the cost strictly drops (at most 3 x `voxels` steps), as voxel centres,
    then the target. The gripper command is -1 (open) when the gripper map at the end
    effector's voxel is >= 0.5, else +1 (close); a motion without a gripper map keeps the
    previous command (open at the start of an episode). Speed is the velocity map's value
    there clipped to [0.05, 1], else 1. The rotation map and `movable` are ignored. With
    no motion pending (before any arrive, or after the last) it emits the current
    position, speed 1 and `done: true`. The workspace is x -0.30..0.35, y -0.45..0.45, z
    0.78..1.30 m; positions outside it count as the border voxel. Maps are read on this
    node's own grid: maps built with a different `voxels` are not checked here."""

    def setup(self) -> None:
        self.grid = voxels.Grid(self.config["voxels"])

    def reset(self, ctx) -> None:
        self.queue: list[dict] = []
        self.index = 0
        self.ticks = 0
        self.command = -1.0  # open
        self._cost = None
        self._anchor = None

    def step(self, inputs: dict, ctx) -> dict:
        if "motions" in inputs:
            self.queue, self.index, self.ticks, self._cost = list(inputs["motions"] or []), 0, 0, None
        eef = np.asarray(inputs["gripper"]["position"], float)
        while self.index < len(self.queue):
            motion = self.queue[self.index]
            if self._cost is None:
                self._start(motion, eef)
            if not self._finished(motion, eef):
                break
            self.index, self.ticks, self._cost = self.index + 1, 0, None
        done = self.index >= len(self.queue)
        if done:
            points, speed = [eef.tolist()], 1.0
        else:
            self.ticks += 1
            motion = self.queue[self.index]
            self._gripper_command(motion, eef)
            points, speed = self._path(eef), self._speed(motion, eef)
        return {"waypoints": {"points": points, "gripper": self.command, "speed": speed},
                "progress": {"motion": self.index, "of": len(self.queue), "done": done}}

    def _start(self, motion: dict, eef: np.ndarray) -> None:
        self._anchor = eef.copy()
        if "affordance" in motion:
            affordance = np.asarray(motion["affordance"], float)
            distance = self.grid.distance_to(affordance)
            cost = distance / max(distance.max(), 1e-9)
            if "avoidance" in motion:
                cost = cost + self.config["avoidance_weight"] * voxels.smooth(np.asarray(motion["avoidance"]) > 0)
            self._cost = cost
            self._target = self.grid.target_point(affordance)
        else:
            self._cost = False  # a gripper-only motion: hold position
            self._target = self._anchor

    def _finished(self, motion: dict, eef: np.ndarray) -> bool:
        if self.ticks >= self.config["max_ticks_per_motion"]:
            return True
        if "affordance" not in motion:
            return self.ticks >= self.config["gripper_ticks"]
        return float(np.linalg.norm(eef - self._target)) < self.config["tolerance_m"]

    def _gripper_command(self, motion: dict, eef: np.ndarray) -> None:
        if "gripper" in motion:
            value = float(np.asarray(motion["gripper"])[self.grid.to_voxel(eef)])
            self.command = -1.0 if value >= 0.5 else 1.0

    def _speed(self, motion: dict, eef: np.ndarray) -> float:
        if "velocity" not in motion:
            return 1.0
        return float(np.clip(np.asarray(motion["velocity"])[self.grid.to_voxel(eef)], 0.05, 1.0))

    def _path(self, eef: np.ndarray) -> list[list[float]]:
        if self._cost is False:
            return [self._target.tolist()]
        cost, n = self._cost, self.grid.n
        current = self.grid.to_voxel(eef)
        path = []
        offsets = [(i, j, k) for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1) if (i, j, k) != (0, 0, 0)]
        for _ in range(3 * n):
            best, best_cost = None, cost[current]
            for di, dj, dk in offsets:
                v = (current[0] + di, current[1] + dj, current[2] + dk)
                if 0 <= v[0] < n and 0 <= v[1] < n and 0 <= v[2] < n and cost[v] < best_cost - 1e-12:
                    best, best_cost = v, cost[v]
            if best is None:
                break
            current = best
            path.append(self.grid.to_world(current).tolist())
        path.append(self._target.tolist())
        return path


@node_type(
    "manipulation.VoxelController",
    inputs={"waypoints": {"type": "Waypoints", "doc": "from the path planner"},
            "gripper": {"type": "Gripper", "doc": "end-effector state"}},
    outputs={"actions": {"type": "ActionChunk", "doc": "end-effector delta actions for the simulator"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": voxels.STEERING_CONFIG},
    role="action",
    doc="Turns the next waypoint into end-effector delta actions (orientation held) with the planned gripper command.",
)
class VoxelController(Node):
    """Turns the planner's waypoints into end-effector delta actions. The goal is the first
    waypoint at least `lookahead_m` from the end effector, else the last waypoint (the
    current position when there are none). The translation is gain x (goal - position) /
    5 cm / `chunk`, clipped per axis to [-1, 1], then multiplied by the planned `speed`
    (1 when absent); rotation is 0 (orientation held) and the gripper value is the planned
    command. It emits `chunk` copies of that same action, all computed from this tick's
    position."""

    def step(self, inputs: dict, ctx) -> dict:
        plan = inputs["waypoints"]
        move = voxels.steer(np.asarray(inputs["gripper"]["position"], float), plan, self.config)
        action = [*move.tolist(), 0.0, 0.0, 0.0, float(plan["gripper"])]
        return {"actions": [list(action) for _ in range(self.config["chunk"])]}

"""Candidate-authored node types run in a sandbox process, not in the worker.

The worker (parent) never runs a line of a candidate's `nodeset/*.py`: it
starts a sandbox process (`harness.sandbox.process`, one per worker thread
and candidate) whose limits are set before the files' top level runs; the
child (`harness.canvas.isolated_child`) loads the files restricted
(`harness.canvas.restricted`) and reports
each type's declaration (ports, config schema, role, docs, state cells),
which the parent registers as `candidate.<Name>` with an `IsolatedNode`
class. Each call of such a node sends only data (`harness.sandbox.codec`):

- construction, `setup`: the node id and config;
- `reset`: a copy of the episode description;
- a firing: the declared input ports' values, the tick, and the current
  values of the state cells the node may read; the reply holds its declared
  outputs, the writes to its writable cells (applied in the worker through
  the node's own grants and the cells' reducers) and its self-log.

The child holds nothing of the simulator, the runner or other nodes, and
what it changes in its copies changes nothing in the worker. A model call
the node makes (`ctx.model.complete`) is made by the worker on the node's
behalf (accounted and budgeted there).

What the candidate's code causes ends the episode as the candidate's
failure, with its own termination reason (`CandidateFailure`): a call that
overruns `call_seconds()` of wall clock (`candidate_timeout`; the process is
killed and a fresh one serves the next episode), the process dying (its
memory or CPU limit, a crash: `candidate_crash`), values that cannot cross
the boundary or be stored (`candidate_unstorable`), a self-log over
`MAX_SELF_LOG_BYTES` (`candidate_log_too_large`). An exception the code
raises is an error of that node (`node_error`, `CandidateCodeError`).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import threading
from pathlib import Path

from harness.canvas.context import REDUCER_FUNCS, CandidateFailure, Context
from harness.canvas.node import Node, NodeType, PortSpec
from harness.canvas.restricted import CandidateCodeError
from harness.sandbox import codec
from harness.sandbox.process import SandboxError, SandboxProcess

CALL_SECONDS_ENV = "ARCHITECT_SANDBOX_CALL_SECONDS"
CALL_SECONDS = 10.0                 # wall clock of one call into candidate code (setup, reset, a firing)
LOAD_SECONDS = 120.0                # starting the child and importing the executor's node modules
MEMORY_BYTES = 2 << 30              # address space of the sandbox process
MAX_SELF_LOG_BYTES = 256 << 10      # a firing's self-log, encoded
_REASONS = {"timeout": "candidate_timeout", "crash": "candidate_crash", "unstorable": "candidate_unstorable"}
_REDUCER_NAMES = {func: name for name, func in REDUCER_FUNCS.items()}
_keys = itertools.count(1)


def call_seconds() -> float:
    """The wall-clock limit of one call (`ARCHITECT_SANDBOX_CALL_SECONDS` overrides the default)."""
    try:
        return float(os.environ.get(CALL_SECONDS_ENV, CALL_SECONDS))
    except ValueError:
        return CALL_SECONDS


class IsolatedNodeset:
    """One candidate's nodeset files as the worker sees them: a sandbox process per thread."""

    def __init__(self, files: list[Path], candidate_dir: Path, executor: str | None):
        self.files = [str(Path(f).resolve()) for f in files]
        self.candidate_dir = str(Path(candidate_dir).resolve())
        self.executor = executor
        self.declared: dict | None = None
        self._local = threading.local()
        self._all: list[SandboxProcess] = []
        self._nodes: dict[int, int] = {}  # id(process) -> its live nodes
        self._lock = threading.Lock()

    def process(self) -> SandboxProcess:
        proc = getattr(self._local, "process", None)
        if proc is None:
            proc = SandboxProcess("harness.canvas.isolated_child:serve", (str(MEMORY_BYTES),), on_start=self._load)
            self._local.process = proc
            with self._lock:
                self._all.append(proc)
        return proc

    def _load(self, proc: SandboxProcess) -> None:
        proc._exchange({"op": "prepare", "executor": self.executor}, LOAD_SECONDS, None)  # noqa: SLF001
        reply = proc._exchange({"op": "load", "files": self.files, "candidate_dir": self.candidate_dir,  # noqa: SLF001
                                "executor": self.executor}, call_seconds(), None)
        if self.declared is None:
            self.declared = reply

    def acquire(self, proc: SandboxProcess) -> None:
        with self._lock:
            self._nodes[id(proc)] = self._nodes.get(id(proc), 0) + 1

    def release(self, proc: SandboxProcess) -> None:
        """A node closed; a process left without nodes ends (the next node starts a fresh one)."""
        with self._lock:
            left = self._nodes[id(proc)] = self._nodes.get(id(proc), 1) - 1
        if left <= 0:
            proc.close()

    def close(self) -> None:
        with self._lock:
            for proc in self._all:
                proc.close()


_declarations: dict[str, dict] = {}  # content key -> what the sandbox declared for those files (the latest kept)
KEPT_DECLARATIONS = 256
_declarations_lock = threading.Lock()


def _content_key(files: list[Path], executor: str | None) -> str:
    """The files' names and bytes and the executor: all a declaration depends on (the files' top level
    cannot read other files: no path module is importable there)."""
    digest = hashlib.sha256(f"{executor}\0".encode())
    for path in files:
        digest.update(Path(path).name.encode() + b"\0" + hashlib.sha256(Path(path).read_bytes()).digest())
    return digest.hexdigest()


def isolated_overlay(files: list[Path], candidate_dir: Path, overlay, executor: str | None) -> IsolatedNodeset:
    """Load the files in a sandbox and register their types in `overlay` (errors: `overlay.load_errors`).
    Files this process declared before (the same bytes, in any candidate folder) are not loaded again."""
    nodeset = IsolatedNodeset(files, candidate_dir, executor)
    key = _content_key(files, executor)
    with _declarations_lock:
        nodeset.declared = _declarations.get(key)
    if nodeset.declared is None:
        try:
            nodeset.process().request({"op": "ping"}, LOAD_SECONDS)
        except SandboxError as exc:
            nodeset.close()
            names = ", ".join(f"nodeset/{Path(f).name}" for f in files)
            overlay.load_errors.append(("nodeset/", f"the candidate's node files ({names}) could not be loaded in "
                                                    f"the sandbox process: {exc}"))
            return nodeset
        nodeset.close()  # declared; a process runs again only while nodes of these types exist
        with _declarations_lock:
            _declarations[key] = nodeset.declared
            while len(_declarations) > KEPT_DECLARATIONS:
                del _declarations[next(iter(_declarations))]
    declared = nodeset.declared or {}
    overlay.load_errors.extend((str(w), str(m)) for w, m in declared.get("errors", []))
    for decl in declared.get("types", []):
        try:
            overlay.register(_proxy_type(nodeset, decl))
        except Exception as exc:  # noqa: BLE001 - a hostile declaration is the candidate's load error
            overlay.load_errors.append(("nodeset/", f"node type {str(decl.get('name'))[:80]!r} is not usable: "
                                                    f"{type(exc).__name__}: {exc}"))
    return nodeset


def _proxy_type(nodeset: IsolatedNodeset, decl: dict) -> NodeType:
    from jsonschema import Draft202012Validator

    from harness.canvas import types as T

    name = decl["name"]
    if not (isinstance(name, str) and name.startswith("candidate.") and name[10:].isidentifier()):
        raise ValueError("a candidate type's name must be candidate.<identifier>")

    def ports(specs: dict, is_input: bool) -> dict[str, PortSpec]:
        out = {}
        for port, spec in specs.items():
            T.parse(spec["type"])
            out[str(port)] = PortSpec(str(port), str(spec["type"]), bool(spec.get("required", True)),
                                      bool(spec.get("privileged", False)) and not is_input, str(spec.get("doc", "")))
        return out

    schema = decl["config_schema"]
    Draft202012Validator.check_schema(schema)
    cls = type(str(decl["class"]).rpartition(".")[2] or "CandidateNode", (IsolatedNode,),
               {"__doc__": str(decl.get("behaviour") or ""), "_nodeset": nodeset, "_type_name": name,
                "__module__": __name__})
    nt = NodeType(name=name, cls=cls, inputs=ports(decl["inputs"], True), outputs=ports(decl["outputs"], False),
                  config_schema=schema, role=decl.get("role"), doc=str(decl.get("doc") or ""),
                  uses_model=bool(decl.get("uses_model")), state_read=tuple(map(str, decl.get("state_read", ()))),
                  state_write=tuple(map(str, decl.get("state_write", ()))), source=f"sandbox:{decl['source']}")
    cls.node_type = nt
    return nt


class IsolatedNode(Node):
    """A candidate-authored node type as the worker runs it: every call goes to its sandbox process."""

    _nodeset: IsolatedNodeset
    _type_name: str

    def __init__(self, node_id: str, config: dict | None = None):
        super().__init__(node_id, config)
        self._key = next(_keys)
        self._seconds = call_seconds()  # read once per node, not per firing
        self._process = self._nodeset.process()
        self._nodeset.acquire(self._process)
        self._set_up = False
        self._granted: Context | None = None
        self._call({"op": "create"}, None)

    def setup(self) -> None:
        self._call({"op": "setup"}, None)
        self._set_up = True

    def reset(self, ctx: Context) -> None:
        self._call({"op": "reset", "episode": ctx.episode}, ctx)

    def step(self, inputs: dict, ctx: Context) -> dict:
        return self._call({"op": "step", "inputs": inputs}, ctx)

    def close(self) -> None:
        try:
            if self._process.running:
                self._process.request({"op": "close", "key": self._key}, 2.0)
        except SandboxError:
            pass
        finally:
            self._nodeset.release(self._process)

    # -- internals ---------------------------------------------------------
    def _call(self, message: dict, ctx: Context | None):
        message["key"] = self._key
        if ctx is not None:
            if ctx is not self._granted:  # the context (grants, model) the runner gave this node, once
                message["node"] = self._spec(ctx)
                self._granted = ctx
            shared = ctx._shared  # noqa: SLF001 - the worker side of the boundary
            message.update(tick=shared.tick, log=shared.log_enabled,
                           reads={cell: shared.state.get(cell) for cell in ctx._reads})  # noqa: SLF001
        reply = self._exchange(message, ctx)
        if reply.get("unknown"):  # a fresh process (the last one was killed): build this node there again
            self._exchange({"op": "create", "key": self._key, "node": self._spec(ctx)}, None)
            if ctx is not None:
                message["node"] = self._spec(ctx)
            reply = self._exchange(message, ctx)
        if not reply.get("ok"):
            if reply.get("unstorable"):
                raise self._failure("candidate_unstorable", reply.get("error", ""))
            raise CandidateCodeError(f"{reply.get('error') or 'the node failed'}\n{reply.get('trace') or ''}".rstrip())
        if ctx is not None:
            self._apply(reply, ctx)
        return reply.get("outputs")

    def _spec(self, ctx: Context | None) -> dict:
        grants = {}
        if ctx is not None:
            shared = ctx._shared  # noqa: SLF001
            grants = {"reads": sorted(ctx._reads), "writes": {c: _REDUCER_NAMES.get(shared.reducers.get(c), "replace")  # noqa: SLF001
                                                              for c in ctx._writes}}  # noqa: SLF001
        return {"type": self._type_name, "node_id": self.node_id, "config": self.config, "setup": self._set_up,
                **grants, "model": bool(ctx is not None and ctx._shared.model_client is not None)}  # noqa: SLF001

    def _exchange(self, message: dict, ctx: Context | None) -> dict:
        if message["op"] == "create":
            message.setdefault("node", self._spec(ctx))
        try:
            return self._process.request(message, self._seconds, on_call=lambda call: _serve_call(call, ctx))
        except SandboxError as exc:
            raise self._failure(_REASONS[exc.reason], str(exc)) from None

    def _apply(self, reply: dict, ctx: Context) -> None:
        shared = ctx._shared  # noqa: SLF001
        for cell, value in reply.get("writes") or ():
            ctx.write(cell, value)
        log = reply.get("self_log")
        if log is not None:
            size = len(codec.encode(log))
            if size > MAX_SELF_LOG_BYTES:
                raise self._failure("candidate_log_too_large",
                                    f"its self-log is {size} bytes (limit {MAX_SELF_LOG_BYTES})")
            ctx.log(**log)
        if shared.stop is not None:
            raise shared.stop
        outputs = reply.get("outputs")
        if outputs is not None and not isinstance(outputs, dict):
            raise CandidateCodeError(f"returned {type(outputs).__name__}, expected a dict of output ports")

    def _failure(self, reason: str, detail: str) -> CandidateFailure:
        return CandidateFailure(reason, f"candidate node {self.node_id!r} ({self._type_name}): {detail}")


def _serve_call(call: dict, ctx: Context | None):
    """A call the child makes mid-request: only a model call, through the node's own accounted client."""
    if call.get("call") != "model" or ctx is None or ctx.model is None:
        raise PermissionError("the only call a candidate node may make is ctx.model.complete")
    response = ctx.model.complete(call.get("messages"), **dict(call.get("kwargs") or {}))
    return {k: v for k, v in response.to_dict().items() if isinstance(v, (str, int, float, bool, type(None)))}

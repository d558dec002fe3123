"""The sandbox process's side of isolated candidate node types (harness.canvas.isolated):
load the nodeset files restricted, report their declarations, and serve each
call of their nodes with local copies of what the worker sent. Runs only in
the sandbox process (`serve`), never in a worker."""

from __future__ import annotations

import traceback
from pathlib import Path

from harness.canvas.context import REDUCER_FUNCS, Context, EpisodeState
from harness.canvas.isolated import LOAD_SECONDS, call_seconds
from harness.canvas.node import Node, NodeType
from harness.sandbox import codec
from harness.sandbox.process import Channel, apply_limits


class ModelReply:
    """What `ctx.model.complete` returns inside the sandbox: the response's fields as attributes."""

    def __init__(self, fields: dict):
        for key, value in fields.items():
            setattr(self, str(key), value)


class _RemoteModel:
    def __init__(self, channel: Channel):
        self._channel = channel

    def complete(self, messages, **kwargs):
        return ModelReply(self._channel.call({"call": "model", "messages": messages, "kwargs": kwargs}))


class _ChildContext(Context):
    """The node's context inside the sandbox: local copies; writes are also recorded for the worker."""

    __slots__ = ("writes_out",)

    def write(self, cell: str, value) -> None:
        super().write(cell, value)
        self.writes_out.append([cell, value])


class _Server:
    def __init__(self, channel: Channel):
        self.channel = channel
        self.registry = None
        self.candidate_dir: Path | None = None
        self.nodes: dict[int, tuple[Node, _ChildContext]] = {}

    def handle(self, msg: dict) -> dict:
        op = msg.get("op")
        if op == "prepare":
            from harness.canvas.registry import default_registry
            from harness.canvas.restricted import node_rules

            node_rules()
            if msg.get("executor"):
                default_registry().ensure_executor(msg["executor"])
            return {"ok": True}
        if op == "load":
            return self.load(msg)
        if op == "ping":
            return {"ok": True}
        key = msg.get("key")
        if op == "create":
            return self.create(key, msg["node"])
        if key not in self.nodes:
            return {"ok": True} if op == "close" else {"ok": False, "unknown": True}
        node, ctx = self.nodes[key]
        if "node" in msg and op != "create":  # the grants and model the runner gave this node
            ctx = self.context(msg["node"])
            self.nodes[key] = (node, ctx)
        if op == "close":
            self.nodes.pop(key)
            node.close()
            return {"ok": True}
        if op == "setup":
            node.setup()
            return {"ok": True}
        shared = ctx._shared  # noqa: SLF001
        shared.tick = msg.get("tick", 0)
        shared.log_enabled = bool(msg.get("log"))
        shared.state.update(msg.get("reads") or {})
        ctx.writes_out, ctx.self_log = [], None
        if op == "reset":
            shared.episode = msg.get("episode") or {}
            ctx._rng = None  # noqa: SLF001 - seeded again from the episode, as the runner does
            node.reset(ctx)
            outputs = None
        else:
            outputs = node.step(msg.get("inputs") or {}, ctx)
        return {"ok": True, "outputs": outputs, "writes": ctx.writes_out, "self_log": ctx.self_log}

    def load(self, msg: dict) -> dict:
        from harness.canvas.registry import declare_nodeset

        self.candidate_dir = Path(msg["candidate_dir"])
        self.registry = declare_nodeset([Path(f) for f in msg["files"]], self.candidate_dir, msg.get("executor"))
        types = [_declaration(nt) for nt in self.registry._types.values()]  # noqa: SLF001
        return {"ok": True, "types": types, "errors": [list(e) for e in self.registry.load_errors]}

    def create(self, key: int, spec: dict) -> dict:
        nt = self.registry.get(spec["type"]) if self.registry is not None else None
        if nt is None:
            return {"ok": False, "error": f"no candidate node type {spec['type']!r}"}
        node = nt.cls(spec["node_id"], spec.get("config") or {})
        self.nodes[key] = (node, self.context(spec))
        if spec.get("setup"):
            node.setup()
        return {"ok": True}

    def context(self, spec: dict) -> _ChildContext:
        shared = EpisodeState({}, _RemoteModel(self.channel) if spec.get("model") else None, self.candidate_dir)
        writes = spec.get("writes") or {}
        for cell, reducer in writes.items():
            shared.reducers[cell] = REDUCER_FUNCS.get(reducer, REDUCER_FUNCS["replace"])
        for cell in spec.get("reads") or ():
            shared.reducers.setdefault(cell, REDUCER_FUNCS["replace"])
        ctx = _ChildContext(spec["node_id"], shared, spec.get("reads") or (), writes)
        ctx.writes_out = []
        return ctx


def _declaration(nt: NodeType) -> dict:
    return {"name": nt.name, "class": nt.cls.__qualname__, "source": nt.source,
            "inputs": {k: v.to_dict() for k, v in nt.inputs.items()},
            "outputs": {k: v.to_dict() for k, v in nt.outputs.items()}, "config_schema": nt.config_schema,
            "role": nt.role, "doc": nt.doc, "behaviour": nt.behaviour, "uses_model": nt.uses_model,
            "state_read": list(nt.state_read), "state_write": list(nt.state_write)}


def serve(memory_bytes: str) -> int:
    """The sandbox process's program: limits first, then one reply per request."""
    allow_cpu = apply_limits(int(memory_bytes))
    channel = Channel()
    server = _Server(channel)
    cpu_seconds = call_seconds() + 1.0
    while True:
        msg = channel.receive()
        if msg is None:
            return 0
        allow_cpu(cpu_seconds if msg.get("op") != "prepare" else LOAD_SECONDS)
        try:
            reply = server.handle(msg)
        except MemoryError:
            channel.send({"ok": False, "restart": True,
                          "error": f"MemoryError: the node ran out of memory ({int(memory_bytes) >> 20} MB)"})
            return 1
        except BaseException as exc:  # noqa: BLE001 - SystemExit & co. from candidate code are its failure
            reply = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:2000]}",
                     "trace": "".join(traceback.format_exception(exc)[-6:])[:4000]}
        try:
            channel.send(reply)
        except (codec.CodecError, RecursionError, ValueError, OverflowError, MemoryError) as exc:
            channel.send({"ok": False, "unstorable": True, "error": f"its reply cannot be stored: {exc}"})

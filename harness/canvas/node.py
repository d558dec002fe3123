"""The node classes and their declared types: `PortSpec`, `NodeType`, `Node`,
`SimulatorNode`. Registries (harness.canvas.registry) hold `NodeType`s; node
modules (core_nodes, executors, candidate nodesets) subclass `Node`."""

from __future__ import annotations

import marshal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

from harness.canvas.context import Context
from harness.schemas import compile_fast


@dataclass(frozen=True)
class PortSpec:
    name: str
    type: str
    required: bool = True
    privileged: bool = False
    doc: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if not self.required:
            out["required"] = False
        if self.privileged:
            out["privileged"] = True
        if self.doc:
            out["doc"] = self.doc
        return out


@dataclass
class NodeType:
    name: str
    cls: type
    inputs: dict[str, PortSpec]
    outputs: dict[str, PortSpec]
    config_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    role: str | None = None
    doc: str = ""
    uses_model: bool = False
    is_simulator: bool = False
    state_read: tuple[str, ...] = ()
    state_write: tuple[str, ...] = ()
    source: str = ""
    _config_validator: Any = field(default=None, repr=False, compare=False)
    _config_fast: Any = field(default=None, repr=False, compare=False)
    _config_verdicts: dict = field(default_factory=dict, repr=False, compare=False)

    def config_is_valid(self, config: dict, reuse: bool = True) -> bool:
        """Yes/no against the config schema; verdicts are remembered by the config's content
        (`reuse=False`: checked afresh)."""
        try:
            # version 2: no back-references, so the bytes follow content alone
            key = marshal.dumps(config, 2) if reuse else None
        except ValueError:  # not plain data: no memo
            key = None
        verdict = self._config_verdicts.get(key) if key is not None else None
        if verdict is None:
            if self._config_fast is None:
                self._config_fast = compile_fast(self.config_schema)
            verdict = self._config_fast(config)
            if key is not None and len(self._config_verdicts) < 4096:
                self._config_verdicts[key] = verdict
        return verdict

    @property
    def config_validator(self) -> Draft202012Validator:
        if self._config_validator is None:
            from jsonschema import Draft202012Validator  # error reports only

            self._config_validator = Draft202012Validator(self.config_schema)
        return self._config_validator

    def state_cells(self, config: dict | None) -> tuple[list[str], list[str]]:
        """Cells the type declares it reads / writes; `$key` means `config[key]`."""
        config = config if isinstance(config, dict) else {}

        def resolve(entries):
            out = []
            for entry in entries:
                if entry.startswith("$"):
                    value = config.get(entry[1:])
                    if isinstance(value, str):
                        out.append(value)
                    elif isinstance(value, list):
                        out.extend(v for v in value if isinstance(v, str))
                else:
                    out.append(entry)
            return out

        return resolve(self.state_read), resolve(self.state_write)

    @property
    def behaviour(self) -> str:
        """What the type does in full, fallbacks included: its class docstring."""
        import inspect

        own = self.cls.__dict__.get("__doc__")
        return inspect.cleandoc(own) if isinstance(own, str) and own.strip() else self.doc

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "role": self.role,
            "doc": self.doc,
            "behaviour": self.behaviour,
            "simulator": self.is_simulator,
            "uses_model": self.uses_model,
            "inputs": {k: v.to_dict() for k, v in self.inputs.items()},
            "outputs": {k: v.to_dict() for k, v in self.outputs.items()},
            "config_schema": self.config_schema,
        }
        if self.state_read or self.state_write:
            out["state"] = {"read": list(self.state_read), "write": list(self.state_write)}
        return out


class Node:
    """Base class of every node type. Subclasses override `step` (and maybe
    `setup`, `reset`, `close`)."""

    node_type: ClassVar[NodeType]
    is_simulator: ClassVar[bool] = False

    def __init__(self, node_id: str, config: dict | None = None):
        self.node_id = node_id
        self.config = _with_defaults(config or {}, getattr(self, "node_type", None))

    def setup(self) -> None:
        """Once, after construction (self.config and self.node_id are set)."""

    def reset(self, ctx: Context) -> None:
        """At the start of every episode."""

    def step(self, inputs: dict, ctx: Context) -> dict:
        """One firing: inputs by port name -> outputs by port name (omit a key to not emit it)."""
        raise NotImplementedError

    def close(self) -> None:
        """When the runner is closed."""


class SimulatorNode(Node):
    """The environment as a node: its outputs are observations, its inputs actions.

    `fresh_outputs`: True when a value `reset_episode` or `step` returns is never
    changed afterwards (each call builds new containers and arrays, or returns
    ones nothing changes). The episode log then encodes the simulator's firings
    with the rest of the tick's; otherwise each is encoded before the next step."""

    is_simulator = True
    fresh_outputs: ClassVar[bool] = False

    def reset_episode(self, episode: dict, ctx: Context) -> dict:
        """Start the episode; return the outputs of tick 0."""
        raise NotImplementedError

    def step(self, inputs: dict, ctx: Context) -> dict:
        """Consume one action (per action port); return the next outputs."""
        raise NotImplementedError

    def done(self) -> bool:
        raise NotImplementedError

    def result(self) -> dict:
        """`{"success": bool, "reward": float, "steps": int, ...metrics}`."""
        raise NotImplementedError


def _with_defaults(config: dict, node_type: NodeType | None) -> dict:
    if node_type is None:
        return dict(config)
    props = node_type.config_schema.get("properties", {})
    out = {k: v["default"] for k, v in props.items() if isinstance(v, dict) and "default" in v}
    out.update(config)
    return out

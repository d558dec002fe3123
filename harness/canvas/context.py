"""`Context`: what a node sees of the running episode besides its inputs.

One `Context` per node per runner (so `ctx.rng` and grants are per node); the
episode-wide part (tick, episode, state cells, model accounting, budgets) is a
shared `EpisodeState`.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import numpy as np

REDUCERS = ("replace", "append", "extend", "merge", "add", "max", "min")


class GrantError(PermissionError):
    """A node touched a state cell it holds no grant for (or one that does not exist)."""


class BudgetExceeded(Exception):
    """A per-episode budget ran out; `reason` is the termination reason."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


CANDIDATE_FAILURES = ("candidate_timeout", "candidate_crash", "candidate_unstorable", "candidate_log_too_large")


class CandidateFailure(Exception):
    """The candidate's code ended the episode by what it did, not by an error it raised: it
    overran its time (`candidate_timeout`), its sandbox process died (`candidate_crash`), or it
    produced values or a self-log that cannot be stored (`candidate_unstorable`,
    `candidate_log_too_large`). `reason` is the episode's termination reason."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


def _replace(state, cell, value):
    state[cell] = value


def _append(state, cell, value):
    current = state.get(cell)
    if current is None:
        state[cell] = [value]
    else:
        current.append(value)


def _extend(state, cell, value):
    current = state.get(cell)
    if current is None:
        state[cell] = list(value)
    else:
        current.extend(value)


def _merge(state, cell, value):
    current = state.get(cell)
    if current is None:
        state[cell] = dict(value)
    else:
        current.update(value)


def _add(state, cell, value):
    current = state.get(cell)
    state[cell] = value if current is None else current + value


def _max(state, cell, value):
    current = state.get(cell)
    state[cell] = value if current is None else max(current, value)


def _min(state, cell, value):
    current = state.get(cell)
    state[cell] = value if current is None else min(current, value)


REDUCER_FUNCS: dict[str, Callable[[dict, str, Any], None]] = {
    "replace": _replace, "append": _append, "extend": _extend, "merge": _merge,
    "add": _add, "max": _max, "min": _min,
}


def default_initial(reducer: str):
    """The value a cell starts from when its spec gives no `initial`."""
    return {"append": [], "extend": [], "merge": {}, "add": 0}.get(reducer)


class EpisodeState:
    """Episode-wide bookkeeping shared by every node's Context."""

    def __init__(self, budgets: dict, model_client=None, candidate_dir: Path | None = None):
        self.tick = 0
        self.episode: dict = {}
        self.state: dict[str, Any] = {}
        self.reducers: dict[str, Callable] = {}
        self.model_client = model_client
        self.candidate_dir = candidate_dir
        self.max_model_calls = budgets.get("model_calls")
        self.max_tokens = budgets.get("tokens")
        self.stop: BudgetExceeded | None = None
        self.log_enabled = False
        self.probes: dict = {}  # evaluation-level switches (executor profile `probes`), read-only for nodes
        self.reset_counters()

    def reset_counters(self) -> None:
        self.model_calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost_usd = 0.0
        self.calls_by_node: dict[str, int] = {}
        self.stop = None

    def check_model_budget(self) -> None:
        """Raise BudgetExceeded if one more model call would exceed a budget."""
        if self.max_model_calls is not None and self.model_calls >= self.max_model_calls:
            raise self._exceeded("model_calls", f"model-call budget of {self.max_model_calls} per episode used up")
        if self.max_tokens is not None and self.input_tokens + self.output_tokens >= self.max_tokens:
            raise self._exceeded("tokens", f"token budget of {self.max_tokens} per episode used up")

    def _exceeded(self, reason: str, message: str) -> BudgetExceeded:
        error = BudgetExceeded(reason, message)
        self.stop = self.stop or error
        return error


class Context:
    """Per-node view of the running episode. See docs/contracts.md (Runtime)."""

    __slots__ = ("node_id", "_shared", "_reads", "_writes", "_rng", "_model",
                 "self_log", "model_usage")

    def __init__(self, node_id: str, shared: EpisodeState, reads=(), writes=()):
        self.node_id = node_id
        self._shared = shared
        self._reads = frozenset(reads)
        self._writes = frozenset(writes)
        self._rng = None  # reset by the runner at every episode start
        self._model = None
        self.self_log: dict | None = None
        self.model_usage: dict | None = None

    # -- episode facts -------------------------------------------------------
    @property
    def tick(self) -> int:
        return self._shared.tick

    @property
    def episode(self) -> dict:
        return self._shared.episode

    @property
    def candidate_dir(self) -> Path | None:
        return self._shared.candidate_dir

    @property
    def probes(self) -> dict:
        """The evaluation's probe switches (e.g. `logging_fault`); empty when none are on."""
        return self._shared.probes

    @property
    def rng(self) -> np.random.Generator:
        """Seeded from the episode seed and this node's id: reproducible per episode."""
        if self._rng is None:
            seed = self._shared.episode.get("seed", 0)
            try:
                seed_int = abs(int(seed))
            except (TypeError, ValueError):
                seed_int = zlib.crc32(str(seed).encode())
            import numpy as np  # only nodes that draw random numbers need it

            self._rng = np.random.default_rng([seed_int, zlib.crc32(self.node_id.encode())])
        return self._rng

    # -- state cells ---------------------------------------------------------
    def read(self, cell: str) -> Any:
        """The cell's current value (live object: do not mutate it; write instead)."""
        if cell not in self._reads:
            raise GrantError(self._grant_message("read", cell))
        return self._shared.state.get(cell)

    def write(self, cell: str, value: Any) -> None:
        """Apply the cell's reducer to `value` (replace, append, merge, ...)."""
        if cell not in self._writes:
            raise GrantError(self._grant_message("write", cell))
        self._shared.reducers[cell](self._shared.state, cell, value)

    def _grant_message(self, access: str, cell: str) -> str:
        if cell not in self._shared.reducers:
            return f"node {self.node_id!r} accessed unknown state cell {cell!r}"
        return f"node {self.node_id!r} has no {access} grant on state cell {cell!r}"

    # -- logging and models --------------------------------------------------
    def log(self, **fields: Any) -> None:
        """Add fields to this firing's record in the episode log (`self`)."""
        if self._shared.log_enabled:
            if self.self_log is None:
                self.self_log = {}
            self.self_log.update(fields)

    @property
    def model(self):
        """The pinned model client (accounted and budgeted), or None."""
        if self._shared.model_client is None:
            return None
        if self._model is None:
            self._model = AccountedModel(self._shared.model_client, self)
        return self._model

    def record_model_call(self, *, model: str | None = None, input_tokens: int = 0,
                          output_tokens: int = 0, cost_usd: float = 0.0) -> None:
        """Account one model call (done by `ctx.model` itself; call it only for
        models reached some other way). Exceeding a budget ends the episode."""
        shared = self._shared
        shared.model_calls += 1
        shared.calls_by_node[self.node_id] = shared.calls_by_node.get(self.node_id, 0) + 1
        shared.input_tokens += int(input_tokens or 0)
        shared.output_tokens += int(output_tokens or 0)
        shared.cost_usd += float(cost_usd or 0.0)
        usage = self.model_usage
        if usage is None:
            self.model_usage = usage = {"model": model, "input_tokens": 0, "output_tokens": 0,
                                        "cost_usd": 0.0, "calls": 0}
        usage["model"] = model or usage["model"]
        usage["input_tokens"] += int(input_tokens or 0)
        usage["output_tokens"] += int(output_tokens or 0)
        usage["cost_usd"] += float(cost_usd or 0.0)
        usage["calls"] += 1
        if shared.max_model_calls is not None and shared.model_calls > shared.max_model_calls:
            raise shared._exceeded("model_calls", f"model-call budget of {shared.max_model_calls} per episode exceeded")
        if shared.max_tokens is not None and shared.input_tokens + shared.output_tokens > shared.max_tokens:
            raise shared._exceeded("tokens", f"token budget of {shared.max_tokens} per episode exceeded")


class AccountedModel:
    """Wraps a ModelClient: checks budgets before `complete`, records usage after."""

    def __init__(self, client, ctx: Context):
        self._client = client
        self._ctx = ctx

    def complete(self, messages, **kwargs):
        self._ctx._shared.check_model_budget()
        response = self._client.complete(messages, **kwargs)
        self._ctx.record_model_call(
            model=getattr(response, "model", None),
            input_tokens=getattr(response, "input_tokens", 0) or 0,
            output_tokens=getattr(response, "output_tokens", 0) or 0,
            cost_usd=getattr(response, "cost_usd", 0.0) or 0.0,
        )
        return response

    def __getattr__(self, name: str):
        return getattr(self._client, name)

"""Run one episode of a graph as a closed perception-action loop.

Per tick: the simulator's current outputs are available; agent nodes fire in
dependency order (a node fires only if all its required inputs arrived this
tick, or last tick through a `delay` edge); then the values on the
simulator's input ports are executed as actions (a list on an `ActionChunk`
port is executed action by action), giving the next tick's observations.

Everything per-graph (firing order, input wiring, grants, reducers) is
computed once in the constructor so the per-firing cost stays small.
"""

from __future__ import annotations

import copy
import time
import traceback
from pathlib import Path
from typing import Any

from harness.canvas import types as T
from harness.canvas.budgets import episode_limits
from harness.canvas.context import (CANDIDATE_FAILURES, REDUCER_FUNCS, BudgetExceeded, CandidateFailure, Context,
                                    EpisodeState, default_initial)
from harness.canvas.episode_log import EpisodeLog
from harness.canvas.graph import flatten, split_endpoint
from harness.canvas.registry import Node, Registry, for_graph
from harness.errors import UserError

TERMINATIONS = ("success", "sim_done", "max_steps", "max_ticks", "wall_time", "model_calls",
                "tokens", "node_error", "no_action", *CANDIDATE_FAILURES)
_IMMUTABLE = (type(None), bool, int, float, str, bytes, tuple, frozenset)


class GraphError(UserError):
    """The graph cannot be run (it failed static validation); `details` lists the problems."""


class NodeOutputError(RuntimeError):
    """A node returned something other than a dict of its declared output ports."""


class GraphRunner:
    """Runs episodes of one graph; node objects (and the simulator) live across episodes.

    `validate=True` refuses graphs with static-validation errors (GraphError).
    `probes`: the evaluation's probe switches, visible to nodes as `ctx.probes`.
    """

    def __init__(self, graph: dict, candidate_dir: str | Path | None = None, registry: Registry | None = None,
                 model_client: Any = None, *, validate: bool = True, probes: dict | None = None):
        self.graph = graph
        self.candidate_dir = Path(candidate_dir) if candidate_dir is not None else None
        self.registry = registry or for_graph(graph, self.candidate_dir)
        if validate:
            from harness.canvas.validate import validate_graph

            errors = [p for p in validate_graph(graph, registry=self.registry, candidate_dir=self.candidate_dir)
                      if p.severity == "error"]
            if errors:
                first = errors[0]
                raise GraphError(f"graph is invalid ({len(errors)} problem(s)); first: [{first.code}] {first.message}",
                                 details=[p.to_dict() for p in errors])
        flat = flatten(graph)
        self.budgets = dict(flat.get("budgets") or {})
        self.max_ticks = (flat.get("termination") or {}).get("max_ticks")
        self._shared = EpisodeState(self.budgets, model_client, self.candidate_dir)
        self._shared.probes = dict(probes or {})
        self._build_state(flat.get("state") or {})
        self._construct_error: str | None = None
        self._setup_reason = "node_error"  # a candidate node's hang or crash keeps its own reason
        self._build_nodes(flat)
        self._setup_error: str | None = self._construct_error
        for nid in ([] if self._setup_error else self.node_ids):
            try:
                self.nodes[nid].setup()
            except CandidateFailure as exc:
                self._setup_reason = exc.reason
                self._setup_error = f"node {nid!r} ({self.node_types[nid].name}) failed in setup: {exc}"
                break
            except Exception:
                self._setup_error = f"node {nid!r} ({self.node_types[nid].name}) failed in setup:\n{traceback.format_exc()}"
                break

    # -- construction ----------------------------------------------------------
    def _build_state(self, cells: dict) -> None:
        self._cell_init: dict[str, list] = {"step": [], "episode": [], "run": []}
        for name, spec in cells.items():
            reducer = spec.get("reducer", "replace")
            self._shared.reducers[name] = REDUCER_FUNCS[reducer]
            initial = spec["initial"] if spec.get("initial") is not None else default_initial(reducer)
            self._cell_init[spec.get("lifetime", "episode")].append(
                (name, initial, not isinstance(initial, _IMMUTABLE)))
        self._init_cells("run")

    def _init_cells(self, lifetime: str) -> None:
        state = self._shared.state
        for name, initial, mutable in self._cell_init[lifetime]:
            state[name] = copy.deepcopy(initial) if mutable else initial

    def _build_nodes(self, flat: dict) -> None:
        grants = flat.get("grants") or {}
        self.node_ids = list(flat["nodes"])
        self.nodes: dict[str, Any] = {}
        self.node_types = {}
        self.contexts: dict[str, Context] = {}
        for nid, spec in flat["nodes"].items():
            nt = self.registry.get(spec["type"])
            if nt is None:
                raise GraphError(f"node {nid!r}: unknown node type {spec['type']!r}")
            self.node_types[nid] = nt
            try:
                self.nodes[nid] = nt.cls(nid, spec.get("config") or {})
            except CandidateFailure as exc:
                self._setup_reason = exc.reason
                self._construct_error = (self._construct_error
                                         or f"node {nid!r} ({nt.name}) failed in its constructor: {exc}")
                self.nodes[nid] = _Unbuilt(nid, {})
            except Exception:
                self._construct_error = self._construct_error or \
                    f"node {nid!r} ({nt.name}) failed in its constructor:\n{traceback.format_exc()}"
                self.nodes[nid] = _Unbuilt(nid, {})
            grant = grants.get(nid) or {}
            self.contexts[nid] = Context(nid, self._shared, grant.get("read", ()), grant.get("write", ()))
        sims = [nid for nid in self.node_ids if self.node_types[nid].is_simulator]
        if len(sims) != 1:
            raise GraphError(f"a graph needs exactly one simulator node, found {len(sims)}")
        self.sim_id = sim_id = sims[0]
        agents = [nid for nid in self.node_ids if nid != sim_id]
        index = {nid: i for i, nid in enumerate(self.node_ids)}
        self._index = index

        incoming: dict[str, dict[str, list]] = {nid: {} for nid in self.node_ids}
        deps: dict[str, set] = {nid: set() for nid in agents}
        delayed_reads = []  # (source, reader) of the delayed edges between agent nodes
        for edge in flat.get("edges", []):
            src, sport = split_endpoint(edge["from"])
            dst, dport = split_endpoint(edge["to"])
            delayed = bool(edge.get("delay"))
            incoming[dst].setdefault(dport, []).append((index[src], sport, delayed))
            if dst == sim_id or src == sim_id:
                continue
            if delayed:
                delayed_reads.append((src, dst))
            else:
                deps[dst].add(src)
        order = _topological(agents, deps)
        self.order = order
        # Nodes whose last outputs a node firing before them reads over a delayed edge: the log
        # encodes that reader's inputs before such a node fires again (it may change them).
        position = {nid: i for i, nid in enumerate(order)}
        self._read_before_it_fires = frozenset(src for src, dst in delayed_reads if position[dst] < position[src])

        def wiring(nid):
            nt = self.node_types[nid]
            ports = []
            for port, spec in nt.inputs.items():
                srcs = tuple(incoming[nid].get(port, ()))
                if srcs:
                    ports.append((port, srcs, spec.required))
            n_required = sum(1 for p in nt.inputs.values() if p.required)
            return tuple(ports), n_required

        self._plan = []
        for nid in order:
            ports, n_required = wiring(nid)
            nt = self.node_types[nid]
            self._plan.append((index[nid], nid, self.nodes[nid], self.contexts[nid], ports, n_required,
                               frozenset(nt.outputs), nt.name))
        self._sim_ports, self._sim_required = wiring(sim_id)
        self._sim_outputs = frozenset(self.node_types[sim_id].outputs)
        chunk = [p for p, spec in self.node_types[sim_id].inputs.items()
                 if T.parse(spec.type) == T.parse("ActionChunk")]
        self._chunk_port = chunk[0] if chunk else None

    # -- running ---------------------------------------------------------------
    def run_episode(self, episode: dict, log: EpisodeLog | None = None) -> dict:
        """Run one episode; never raises for node errors (see `termination`/`error`).

        Reset every node and the simulator, then tick until the simulator is done or
        a budget ends the episode: fire the agent nodes in dependency order, gather
        the actions wired into the simulator, and step it (once per action of a chunk)."""
        start = time.perf_counter()
        limits = episode_limits(self.budgets, episode)
        self._step_cap, self._wall_cap = limits.get("max_steps"), limits.get("wall_seconds")
        logging = self._start_episode(episode, log)
        episode = self._shared.episode = dict(episode, **limits)  # what nodes (ctx.episode) and the simulator see
        sim = self.nodes[self.sim_id]
        self._steps = self._ticks = 0
        termination: str | None = None
        error: str | None = None
        sim_result: dict = {}
        self._current = self.sim_id
        try:
            if self._setup_error:
                raise _SetupFailed(self._setup_error, self._setup_reason)
            sim_out = self._reset_nodes(episode, log if logging else None)
            prev = [None] * len(self.node_ids)
            while termination is None and not sim.done():
                termination = self._budget_ended(start)
                if termination is not None:
                    break
                self._shared.tick = self._ticks
                if self._cell_init["step"]:
                    self._init_cells("step")
                cur = self._fire_agent_nodes(sim_out, prev, log if logging else None)
                actions = self._actions_for_simulator(cur, prev)
                if actions is None:
                    termination = "no_action"
                    break
                sim_out = self._step_simulator(actions, sim_out, log if logging else None)
                self._ticks += 1
                prev = cur
            self._current = self.sim_id
            sim_result = dict(sim.result() or {})
            if termination is None:
                termination = "success" if sim_result.get("success") else "sim_done"
        except (BudgetExceeded, CandidateFailure) as exc:
            termination = exc.reason
            error = str(exc)
            sim_result = self._safe_result(sim)
        except _SetupFailed as exc:
            termination, error = exc.reason, exc.message
        except Exception:
            termination = "node_error"
            nt = self.node_types.get(self._current)
            error = (f"node {self._current!r} ({nt.name if nt else '?'}) raised at tick {self._ticks}:\n"
                     f"{traceback.format_exc()}")
            sim_result = self._safe_result(sim)
        finally:
            if logging:
                log.flush()  # (the last tick's firings, before the nodes are reset or stepped again)
        result = self._episode_result(sim_result, termination, error, start)
        if log is not None:
            log.result = result
        return result

    def _start_episode(self, episode: dict, log: EpisodeLog | None) -> bool:
        """Reset the shared counters and the episode/step cells; whether this episode is logged."""
        shared = self._shared
        shared.reset_counters()
        shared.episode = episode
        shared.tick = 0
        logging = log is not None and log.enabled
        shared.log_enabled = logging
        if log is not None:
            log.episode = episode
            log.ports = self.port_types
            log.forget()  # nodes are reset below: values it memoised may change
        self._init_cells("episode")
        self._init_cells("step")
        return logging

    def _reset_nodes(self, episode: dict, log: EpisodeLog | None) -> dict:
        """Reset every node, then the simulator on the episode; the simulator's first outputs."""
        for nid in self.node_ids:
            self._current = nid
            ctx = self.contexts[nid]
            ctx._rng = None
            self.nodes[nid].reset(ctx)
        self._current = self.sim_id
        sim_ctx = self.contexts[self.sim_id]
        t0 = time.perf_counter()
        sim_out = self.nodes[self.sim_id].reset_episode(episode, sim_ctx)
        if log is not None:
            self._log_firing(log, sim_ctx, self.sim_id, self.node_types[self.sim_id].name, 0, None, sim_out, t0)
        _check_outputs(sim_out, self._sim_outputs, self.sim_id)
        return sim_out

    def _budget_ended(self, start: float) -> str | None:
        """The budget that ends the episode before this tick, if any."""
        if self._step_cap is not None and self._steps >= self._step_cap:
            return "max_steps"
        if self.max_ticks is not None and self._ticks >= self.max_ticks:
            return "max_ticks"
        if self._wall_cap is not None and time.perf_counter() - start > self._wall_cap:
            return "wall_time"
        return None

    def _fire_agent_nodes(self, sim_out: dict, prev: list, log: EpisodeLog | None) -> list:
        """One tick of the agent: each node in dependency order fires when its required
        inputs arrived (this tick, or last tick over a delayed edge); its outputs by node index."""
        shared = self._shared
        ticks = self._ticks
        cur = [None] * len(self.node_ids)
        cur[self._index[self.sim_id]] = sim_out
        if log is not None:
            log.flush()  # (last tick's firings, before their nodes fire again)
        for idx, nid, node, ctx, ports, n_required, declared, tname in self._plan:
            inputs = _gather(ports, n_required, cur, prev)
            if inputs is None:
                continue
            self._current = nid
            if log is not None:
                if ctx._writes:  # noqa: SLF001 - it may change cells in place, whose live values ports may carry
                    log.forget()
                elif nid in self._read_before_it_fires:
                    log.flush()
                t0 = time.perf_counter()
                ctx.self_log = ctx.model_usage = None
                try:
                    outs = node.step(inputs, ctx)
                except BaseException as exc:
                    self._log_firing(log, ctx, nid, tname, ticks, inputs, None, t0,
                                     error=f"{type(exc).__name__}: {exc}")
                    raise
                self._log_firing(log, ctx, nid, tname, ticks, inputs, outs, t0)
            else:
                outs = node.step(inputs, ctx)
            try:
                if not outs.keys() <= declared:
                    raise NodeOutputError(f"node {nid!r} ({tname}) emitted undeclared output(s) "
                                          f"{sorted(set(outs) - declared)}; declared: {sorted(declared)}")
            except AttributeError:
                raise NodeOutputError(f"node {nid!r} ({tname}) returned {type(outs).__name__}, "
                                      "expected a dict of output ports") from None
            cur[idx] = outs
            if shared.stop is not None:
                raise shared.stop
        return cur

    def _actions_for_simulator(self, cur: list, prev: list) -> list[dict] | None:
        """The simulator's inputs this tick, one dict per action of a chunk; None when a
        required action input is missing or the chunk is empty."""
        actions = _gather(self._sim_ports, self._sim_required, cur, prev)
        if actions is None:
            return None
        chunk = actions.get(self._chunk_port) if self._chunk_port else None
        if isinstance(chunk, (list, tuple)) and not chunk:
            return None
        if isinstance(chunk, (list, tuple)):
            return [dict(actions, **{self._chunk_port: a}) for a in chunk]
        return [actions]

    def _step_simulator(self, sequence: list[dict], sim_out: dict, log: EpisodeLog | None) -> dict:
        """Step the simulator through the tick's actions (stopping at max_steps or done);
        its last outputs."""
        self._current = self.sim_id
        sim = self.nodes[self.sim_id]
        sim_ctx = self.contexts[self.sim_id]
        before_step = None  # what a step may change: cells it may write, or the values it returned before
        if log is not None:
            before_step = log.forget if sim_ctx._writes else None if sim.fresh_outputs else log.flush  # noqa: SLF001
        for sub in sequence:
            if self._step_cap is not None and self._steps >= self._step_cap:
                break
            if before_step is not None:
                before_step()
            t0 = time.perf_counter() if log is not None else 0.0
            sim_out = sim.step(sub, sim_ctx)
            self._steps += 1
            if log is not None:
                self._log_firing(log, sim_ctx, self.sim_id, self.node_types[self.sim_id].name, self._ticks, sub,
                                 sim_out, t0)
            _check_outputs(sim_out, self._sim_outputs, self.sim_id)
            if sim.done():
                break
        return sim_out

    def _episode_result(self, sim_result: dict, termination: str, error: str | None, start: float) -> dict:
        shared = self._shared
        return {
            "success": bool(sim_result.get("success")) and termination not in ("node_error", *CANDIDATE_FAILURES),
            "reward": float(sim_result.get("reward", 0.0) or 0.0),
            "steps": self._steps,
            "ticks": self._ticks,
            "termination": termination,
            "error": error,
            "metrics": {k: v for k, v in sim_result.items() if k not in ("success", "reward")},
            "model_calls": shared.model_calls,
            "input_tokens": shared.input_tokens,
            "output_tokens": shared.output_tokens,
            "cost_usd": shared.cost_usd,
            "wall_seconds": time.perf_counter() - start,
        }

    @property
    def port_types(self) -> dict[str, dict]:
        """node -> {"type": its node type, "outputs": {port: port type}} (the episode log's header keeps it)."""
        return {nid: {"type": nt.name, "outputs": {port: spec.type for port, spec in nt.outputs.items()}}
                for nid, nt in self.node_types.items()}

    @property
    def model_calls_by_node(self) -> dict[str, int]:
        """Model calls of the last episode, by the node whose context accounted them."""
        return dict(self._shared.calls_by_node)

    @staticmethod
    def _safe_result(sim) -> dict:
        try:
            return dict(sim.result() or {})
        except Exception:
            return {}

    @staticmethod
    def _log_firing(log, ctx, nid, tname, tick, inputs, outs, t0, error=None):
        """Defer the firing that started at `t0` (see `EpisodeLog.defer`: the runner flushes before
        its values may change)."""
        log.defer(nid, tname, tick, inputs, outs if type(outs) is dict or isinstance(outs, dict) else None,
                  time.perf_counter() - t0, error, ctx.model_usage, ctx.self_log)
        ctx.self_log = ctx.model_usage = None

    def close(self) -> None:
        """Close every node (errors while closing are ignored)."""
        for node in self.nodes.values():
            try:
                node.close()
            except Exception:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _gather(ports, n_required: int, cur: list, prev: list) -> dict | None:
    """A node's input values this tick: for each port the first of its sources
    that has a value (this tick's outputs, or last tick's over a delayed edge);
    None when a required port has none."""
    values = {}
    for port, srcs, required in ports:
        for si, sp, delayed in srcs:
            d = prev[si] if delayed else cur[si]
            if d is not None and sp in d:
                values[port] = d[sp]
                if required:
                    n_required -= 1
                break
    return None if n_required else values


class _SetupFailed(Exception):
    def __init__(self, message: str, reason: str = "node_error"):
        super().__init__(message)
        self.message, self.reason = message, reason


class _Unbuilt(Node):
    """Stands in for a node whose constructor raised (every episode then fails)."""

    def step(self, inputs, ctx):
        raise _SetupFailed("node was not constructed")


def _check_outputs(outs, declared, nid) -> None:
    if not isinstance(outs, dict):
        raise NodeOutputError(f"simulator {nid!r} returned {type(outs).__name__}, expected a dict of output ports")
    if not outs.keys() <= declared:
        raise NodeOutputError(f"simulator {nid!r} emitted undeclared output(s) {sorted(set(outs) - declared)}")


def _topological(nodes: list[str], deps: dict[str, set]) -> list[str]:
    """Dependency order, ties broken by declaration order (stable)."""
    remaining = {n: set(d) & set(nodes) for n, d in deps.items()}
    order: list[str] = []
    done: set[str] = set()
    while len(order) < len(nodes):
        ready = [n for n in nodes if n not in done and remaining[n] <= done]
        if not ready:
            cyclic = sorted(n for n in nodes if n not in done)
            raise GraphError(f"cycle among nodes {cyclic} (add \"delay\": 1 to an edge to break it)")
        for n in ready:
            order.append(n)
            done.add(n)
    return order

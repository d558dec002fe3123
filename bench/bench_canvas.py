"""Canvas benchmarks: static validation of a 50-node graph, and the runtime's
per-firing overhead against calling the same node functions directly.

    python bench/bench_canvas.py [--nodes 50] [--ticks 2000]

Targets: validation p50 < 1 ms; runtime overhead < 10 µs per firing.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time

from harness.canvas.registry import Node, Registry, SimulatorNode, default_registry, node_type
from harness.canvas.runtime import GraphRunner
from harness.canvas.validate import validate_graph
from harness.canvas.episode_log import EpisodeLog

REG = Registry(parent=default_registry())
_CONFIG = {"type": "object", "additionalProperties": False,
           "properties": {"gain": {"type": "number", "default": 1.0}, "label": {"type": "string"}}}


@node_type("bench.World", registry=REG, inputs={"action": "ActionChunk"},
           outputs={"observation": "Observation", "mission": "Text", "truth": {"type": "Pose", "privileged": True}},
           config_schema={"type": "object", "properties": {"horizon": {"type": "integer", "default": 10**9}}})
class World(SimulatorNode):
    def reset_episode(self, episode, ctx):
        self.t = 0
        self.out = {"observation": 0, "mission": "m", "truth": 0}
        return self.out

    def step(self, inputs, ctx):
        self.t += 1
        return self.out

    def done(self):
        return False

    def result(self):
        return {"success": False, "reward": 0.0, "steps": self.t}


@node_type("bench.Source", registry=REG, inputs={"observation": "Observation"}, outputs={"feature": "Feature"},
           config_schema=_CONFIG)
class Source(Node):
    def setup(self):
        self.out = {"feature": 1}

    def step(self, inputs, ctx):
        return self.out


@node_type("bench.Mix", registry=REG, inputs={"a": "Feature", "b": {"type": "Optional[Feature]", "required": False}},
           outputs={"feature": "Feature"}, config_schema=_CONFIG)
class Mix(Node):
    def setup(self):
        self.out = {"feature": 1}

    def step(self, inputs, ctx):
        return self.out


@node_type("bench.Act", registry=REG, inputs={"feature": "Feature", "mission": "Text"}, outputs={"action": "Action"},
           config_schema=_CONFIG)
class Act(Node):
    def setup(self):
        self.out = {"action": 0}

    def step(self, inputs, ctx):
        return self.out


def make_graph(n_nodes: int = 50) -> dict:
    """sim + 4 sources + a layered mesh of Mix nodes + one actor = n_nodes nodes."""
    nodes = {"sim": {"type": "bench.World", "config": {}}}
    edges = []
    sources = [f"src{i}" for i in range(4)]
    for s in sources:
        nodes[s] = {"type": "bench.Source", "config": {"gain": 0.5, "label": s}}
        edges.append({"from": "sim.observation", "to": f"{s}.observation"})
    previous = sources
    mixes = []
    for i in range(n_nodes - len(nodes) - 1):
        nid = f"mix{i}"
        nodes[nid] = {"type": "bench.Mix", "config": {"gain": 1.0 + i}}
        edges.append({"from": f"{previous[i % len(previous)]}.feature", "to": f"{nid}.a"})
        edges.append({"from": f"{previous[(i + 1) % len(previous)]}.feature", "to": f"{nid}.b"})
        mixes.append(nid)
        if len(mixes) % 4 == 0:
            previous = mixes[-4:]
    nodes["act"] = {"type": "bench.Act", "config": {}}
    edges += [{"from": f"{mixes[-1]}.feature", "to": "act.feature"}, {"from": "sim.mission", "to": "act.mission"},
              {"from": "act.action", "to": "sim.action"}]
    return {
        "schema_version": 1, "name": "bench", "executor": "bench", "model_profile": None,
        "nodes": nodes, "edges": edges,
        "state": {"trace": {"type": "List[Feature]", "reducer": "append", "lifetime": "episode"}},
        "grants": {"mix0": {"read": ["trace"], "write": ["trace"]}},
        "budgets": {"max_steps": 10**9, "wall_seconds": 3600},
        "termination": {"max_ticks": 10**9},
    }


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def bench_validation(n_nodes: int, repeats: int) -> dict:
    base = make_graph(n_nodes)
    assert validate_graph(base, registry=REG) == [], validate_graph(base, registry=REG)
    rows = {}
    # "edited": each run validates a graph differing from the last by one config
    # value (what a proposer produces); "same": the identical graph again.
    for label in ("edited", "same"):
        times = []
        for i in range(repeats):
            g = copy.deepcopy(base)
            if label == "edited":
                g["nodes"][f"mix{i % 10}"]["config"]["gain"] = float(i)
            t0 = time.perf_counter()
            problems = validate_graph(g, registry=REG)
            times.append(time.perf_counter() - t0)
            assert not problems
        rows[label] = (statistics.median(times) * 1e3, percentile(times, 0.95) * 1e3)
    return rows


def bench_seed_validation(repeats: int):
    """The real BabyAI seed graph, for comparison (None if absent)."""
    from harness.executor_api import seed_graph_path
    from harness.canvas.graph import load_graph

    path = seed_graph_path("babyai")
    if not path.exists():
        return None
    graph = load_graph(path)
    validate_graph(graph)  # imports the executor once
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        validate_graph(graph)
        times.append(time.perf_counter() - t0)
    return len(graph["nodes"]), statistics.median(times) * 1e3, percentile(times, 0.95) * 1e3


def bench_runtime(n_nodes: int, ticks: int) -> dict:
    graph = make_graph(n_nodes)
    graph["termination"]["max_ticks"] = ticks
    runner = GraphRunner(graph, registry=REG)
    runner.run_episode({"seed": 0})  # warm-up
    firings = ticks * len(runner.node_ids)  # agent nodes + one simulator step per tick
    t0 = time.perf_counter()
    result = runner.run_episode({"seed": 1}, EpisodeLog(enabled=False))
    t_runtime = time.perf_counter() - t0
    assert result["ticks"] == ticks and result["termination"] == "max_ticks", result

    # Direct: the same node objects' step() in the same order with prebuilt inputs.
    nodes = [runner.nodes[n] for n in runner.order]
    ctxs = [runner.contexts[n] for n in runner.order]
    sim, sim_ctx = runner.nodes[runner.sim_id], runner.contexts[runner.sim_id]
    prebuilt = []
    for nid in runner.order:
        nt = runner.node_types[nid]
        prebuilt.append({p: 1 for p in nt.inputs})
    sim.reset_episode({"seed": 1}, sim_ctx)
    pairs = list(zip(nodes, prebuilt, ctxs))
    action = {"action": 0}
    t0 = time.perf_counter()
    for _ in range(ticks):
        for node, inputs, ctx in pairs:
            node.step(inputs, ctx)
        sim.step(action, sim_ctx)
    t_direct = time.perf_counter() - t0

    log = EpisodeLog(enabled=True)
    t0 = time.perf_counter()
    runner.run_episode({"seed": 2}, log)
    t_logged = time.perf_counter() - t0
    return {"firings": firings, "runtime_s": t_runtime, "direct_s": t_direct, "logged_s": t_logged}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--ticks", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=500)
    args = parser.parse_args()

    rows = bench_validation(args.nodes, args.repeats)
    seed_row = bench_seed_validation(args.repeats)
    print(f"static validation, {args.nodes}-node graph ({len(make_graph(args.nodes)['edges'])} edges), "
          f"{args.repeats} runs each:")
    print(f"  {'case':<32}{'p50 ms':>10}{'p95 ms':>10}{'target p50':>12}")
    for label, (p50, p95) in rows.items():
        name = {"edited": "one config value changed per run", "same": "identical graph again"}[label]
        print(f"  {name:<32}{p50:>10.3f}{p95:>10.3f}{'< 1 ms':>12}  {'OK' if p50 < 1 else 'MISSED'}")

    if seed_row:
        n, p50, p95 = seed_row
        print(f"  {f'executors/babyai/seeds/babyai graph ({n} nodes)':<32}{p50:>10.3f}{p95:>10.3f}")

    r = bench_runtime(args.nodes, args.ticks)
    per_rt = r["runtime_s"] / r["firings"] * 1e6
    per_direct = r["direct_s"] / r["firings"] * 1e6
    per_log = r["logged_s"] / r["firings"] * 1e6
    overhead = per_rt - per_direct
    print(f"\nruntime, {args.nodes}-node graph, {args.ticks} ticks = {r['firings']} firings:")
    print(f"  {'mode':<34}{'µs/firing':>10}{'ratio':>8}{'overhead µs':>13}{'target':>10}")
    print(f"  {'direct calls (baseline)':<34}{per_direct:>10.2f}{1.0:>8.2f}{0.0:>13.2f}")
    print(f"  {'GraphRunner, log disabled':<34}{per_rt:>10.2f}{per_rt / per_direct:>8.2f}{overhead:>13.2f}"
          f"{'< 10':>10}  {'OK' if overhead < 10 else 'MISSED'}")
    print(f"  {'GraphRunner, EpisodeLog enabled':<34}{per_log:>10.2f}{per_log / per_direct:>8.2f}"
          f"{per_log - per_direct:>13.2f}")


if __name__ == "__main__":
    main()

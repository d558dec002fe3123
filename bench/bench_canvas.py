"""Canvas benchmarks: static validation (50-node graph, and its growth over
10 / 50 / 200 / 1,000 nodes), the runtime's cost per node firing with and
without the episode log, and patch application against its op count.

    python bench/bench_canvas.py [--full]

Targets: validation p50 < 1 ms on 50 nodes, growing about linearly; runtime
overhead < 10 µs per firing and < 10 µs per firing with logging; patch
application linear in the number of ops. Rows for bench/run_all.py: `rows(full)`.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.canvas.registry import Node, Registry, SimulatorNode, default_registry, node_type
from harness.canvas.runtime import GraphRunner
from harness.canvas.validate import validate_graph
from harness.canvas.episode_log import EpisodeLog
from harness.canvas.log_reader import read_log
from harness.canvas.patch import apply_patch

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


def _timed(fn, repeats: int) -> tuple[float, float]:
    """(wall p50, cpu p50) in seconds of `repeats` calls of fn(i)."""
    wall, cpu = [], []
    for i in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        fn(i)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(wall), statistics.median(cpu)


def bench_validation(n_nodes: int, repeats: int, case: str) -> tuple[float, float]:
    """p50 (wall, cpu) of validating a `n_nodes` graph: "edited" = a graph differing
    from the previous one by one config value (what a proposer produces),
    "same" = the identical graph again, "full" = an edited graph checked
    without reusing anything (`reuse=False`)."""
    base = make_graph(n_nodes)
    problems = validate_graph(base, registry=REG)
    assert problems == [], problems
    mixes = [n for n in base["nodes"] if n.startswith("mix")][:10]
    graphs = []
    for i in range(repeats):  # built beforehand: only validation is timed
        g = copy.deepcopy(base)
        if case != "same":
            g["nodes"][mixes[i % len(mixes)]]["config"]["gain"] = float(i)
        graphs.append(g)
    reuse = case != "full"
    return _timed(lambda i: validate_graph(graphs[i], registry=REG, reuse=reuse), repeats)


def bench_seed_validation(repeats: int):
    """The real BabyAI seed graph: (nodes, wall p50 s), or None if absent."""
    from harness.executor_api import seed_graph_path
    from harness.canvas.graph import load_graph

    path = seed_graph_path("babyai")
    if not path.exists():
        return None
    graph = load_graph(path)
    validate_graph(graph)  # imports the executor once
    return len(graph["nodes"]), _timed(lambda i: validate_graph(graph), repeats)[0]


def bench_runtime(n_nodes: int, ticks: int) -> dict:
    """Seconds per firing: direct calls of the node objects, the runner without
    and with an EpisodeLog (best of 3 interleaved rounds). "logged" is the episode
    run with the log and the log written as JSONL, as an evaluation writes it (it
    once read the records back instead: a reader's cost, not the firing path's)."""
    graph = make_graph(n_nodes)
    graph["termination"]["max_ticks"] = ticks
    runner = GraphRunner(graph, registry=REG)
    runner.run_episode({"seed": 0})  # warm-up
    firings = ticks * len(runner.node_ids)  # agent nodes + one simulator step per tick

    nodes = [runner.nodes[n] for n in runner.order]
    ctxs = [runner.contexts[n] for n in runner.order]
    sim, sim_ctx = runner.nodes[runner.sim_id], runner.contexts[runner.sim_id]
    pairs = list(zip(nodes, [{p: 1 for p in runner.node_types[n].inputs} for n in runner.order], ctxs))
    action = {"action": 0}

    def direct():
        sim.reset_episode({"seed": 1}, sim_ctx)
        for _ in range(ticks):
            for node, inputs, ctx in pairs:
                node.step(inputs, ctx)
            sim.step(action, sim_ctx)

    def plain():
        result = runner.run_episode({"seed": 1}, EpisodeLog(enabled=False))
        assert result["ticks"] == ticks and result["termination"] == "max_ticks", result

    def logged():  # what an evaluation does: the episode logged, then written as JSONL
        log = EpisodeLog(enabled=True)
        runner.run_episode({"seed": 2}, log)
        log.write_jsonl(log_path)

    best = {"direct": float("inf"), "runtime": float("inf"), "logged": float("inf")}
    cpu = dict(best)
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "episode.jsonl"
        for _ in range(3):
            for key, fn in (("direct", direct), ("runtime", plain), ("logged", logged)):
                t0, c0 = time.perf_counter(), time.process_time()
                fn()
                cpu[key] = min(cpu[key], time.process_time() - c0)
                best[key] = min(best[key], time.perf_counter() - t0)
        assert len(read_log(log_path)[1]) == firings + 1  # (checked untimed)
    return {**{key: value / firings for key, value in best.items()},
            **{f"{key}_cpu": value / firings for key, value in cpu.items()}}


def make_patch(n_ops: int) -> dict:
    """A proposer-like patch of n_ops: new nodes wired in, configs set, some
    edges and nodes removed again, budgets changed."""
    ops = []
    i = 0
    while len(ops) < n_ops:
        nid = f"x{i}"
        ops += [{"op": "add_node", "id": nid, "type": "bench.Mix", "config": {"gain": 1.0}},
                {"op": "add_edge", "from": "src0.feature", "to": f"{nid}.a"},
                {"op": "add_edge", "from": "src1.feature", "to": f"{nid}.b"},
                {"op": "set_config", "node": nid, "pointer": "/gain", "value": float(i)},
                {"op": "remove_edge", "from": "src1.feature", "to": f"{nid}.b"},
                {"op": "set_budget", "budgets": {"max_steps": i + 1}}]
        if i % 2:
            ops.append({"op": "remove_node", "id": f"x{i - 1}"})
        i += 1
    return {"ops": ops[:n_ops]}


def bench_patch(n_ops: int) -> tuple[float, float]:
    """(wall, cpu) seconds to apply a patch of n_ops (after a warm-up that compiles the op checks)."""
    graph = make_graph(50)
    apply_patch(graph, make_patch(20))
    patch = make_patch(n_ops)
    t0, c0 = time.perf_counter(), time.process_time()
    apply_patch(graph, patch)
    return time.perf_counter() - t0, time.process_time() - c0


def rows(full: bool) -> list[dict]:
    out = []
    sizes = {10: 500, 50: 500, 200: 200, 1000: 50} if full else {10: 200, 50: 300, 200: 60, 1000: 12}
    for case, label in (("edited", "one config value changed per run"), ("same", "identical graph again")):
        wall, cpu = bench_validation(50, sizes[50], case)
        out.append({"metric": f"validation p50, 50 nodes, {label}", "value": wall * 1e3, "unit": "ms", "target": 1.0,
                    "note": f"cpu p50 {cpu * 1e3:.3f} ms, {sizes[50]} runs"})
    per_node = {}
    for n, repeats in sizes.items():
        for case in ("edited", "full"):
            if n == 50 and case == "edited":
                continue
            wall, cpu = bench_validation(n, repeats, case)
            if case == "full":
                per_node[n] = cpu / n
            label = "one config value changed per run" if case == "edited" else "full check (reuse=False)"
            out.append({"metric": f"validation p50, {n} nodes, {label}", "value": wall * 1e3, "unit": "ms",
                        "target": None, "note": f"cpu p50 {cpu * 1e3:.3f} ms, {repeats} runs"})
    out.append({"metric": "validation growth: cpu time per node, 1,000 vs 50 nodes (full check)",
                "value": per_node[1000] / per_node[50], "unit": "x", "target": 2.0,
                "note": "1.0 = exactly linear"})
    seed = bench_seed_validation(200)
    if seed:
        out.append({"metric": f"validation p50, seeds/babyai ({seed[0]} nodes)", "value": seed[1] * 1e3, "unit": "ms",
                    "target": None})
    ticks = 2000 if full else 500
    r = bench_runtime(50, ticks)
    out.append({"metric": "runtime overhead per firing, log disabled (runner - direct calls)",
                "value": (r["runtime"] - r["direct"]) * 1e6, "unit": "µs", "target": 10.0,
                "note": f"50 nodes, {ticks} ticks, best of 3; direct calls {r['direct'] * 1e6:.2f} µs/firing; "
                        f"cpu: runner {r['runtime_cpu'] * 1e6:.2f}, direct {r['direct_cpu'] * 1e6:.2f}"})
    out.append({"metric": "runtime per firing, EpisodeLog enabled", "value": r["logged"] * 1e6, "unit": "µs",
                "target": 10.0, "note": f"cpu {r['logged_cpu'] * 1e6:.2f} µs; log disabled: {r['runtime'] * 1e6:.2f} "
                                        "µs/firing"})
    n_ops = 20000 if full else 2000
    (big, big_cpu), (_small, small_cpu) = bench_patch(n_ops), bench_patch(n_ops // 10)
    out.append({"metric": f"patch application, {n_ops:,} ops", "value": big, "unit": "s", "target": None,
                "note": f"cpu {big_cpu:.2f} s, {big_cpu / n_ops * 1e6:.1f} µs/op"})
    out.append({"metric": f"patch application: cpu time per op, {n_ops:,} vs {n_ops // 10:,} ops",
                "value": (big_cpu / n_ops) / (small_cpu / (n_ops // 10)), "unit": "x", "target": 2.0,
                "note": "1.0 = exactly linear"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="the issue's sizes (more runs, 2,000 ticks, 20,000 ops)")
    args = parser.parse_args()
    from run_all import print_table

    print_table(rows(args.full))


if __name__ == "__main__":
    main()

"""Evaluation throughput and canvas-runtime overhead on the BabyAI seed.

    python bench/bench_evaluate.py [--episodes 100] [--pairs 2] [--overhead-episodes 30]

1. The search tier (first N episodes, default all 100) of seeds/babyai with 1
   and with 2 worker processes, runs alternating (cache off, per-episode logs
   on, as in a real evaluation): each side's best wall time and the speed-up
   (target >= 1.9x on 2 cores), the best 2-worker run's makespan against its
   lower bound (metrics.json `schedule`), and what a later command of a run
   pays for its forkserver (the run's warm one, started by its first command:
   harness.evaluation.warm; timed in fresh processes) against the run-to-run
   spread of the 2-worker search tier (repeated in this process): whether it
   stands out of the tier's own noise.
   The cold forkserver start (a run's first command, an `experiment run`) is
   printed beside it.
2. The same agent run four ways in this process on the same episodes: the
   node objects called in a plain Python loop (no runtime), the canvas
   runtime without logging, the canvas runtime with per-firing logging
   written as JSONL (every port value in full), and the runtime with a naive
   JSON log in its place for comparison (`NaiveDumpLog`: one orjson call per
   firing over its inputs and outputs, arrays as a copy of their bytes, a
   consumer's inputs encoded again though they were encoded as outputs; no
   line format, no sharing, nothing written): wall times (each episode's best over
   interleaved rounds, summed; see `bench_overhead`) and ratios (target:
   logged runtime <= 1.1x the plain loop), with the share of the logged time
   spent writing the file (`write_jsonl`) beside them.
Figures are printed side by side; nothing is asserted.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from forkserver_start import run_commands_forkserver, start_forkserver  # noqa: E402  (after the path set-up)

SEED = ROOT / "seeds" / "babyai"


def bench_workers(n_episodes: int | None, pairs: int, runs_2: int) -> dict:
    """`pairs` runs with 1 worker and 2 workers alternating (1 first: the first 1-worker run records
    the durations the 2-worker runs schedule by), then 2-worker runs up to `runs_2` for the
    run-to-run spread (`walls_2`). Each side's figure is its best run (the least disturbed: the
    machine may be shared), kept with that run's results."""
    from harness.evaluation import evaluate

    # Every run forks its workers from the forkserver started here, as every
    # evaluation after a process's first does (the first would charge its start to one side).
    out = {"forkserver": start_forkserver("babyai"), "walls_1": [], "walls_2": [],
           "run_commands": run_commands_forkserver("babyai")}
    order = [1, 2] * pairs + [2] * max(0, runs_2 - pairs)
    results = []  # each run's per-episode results
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ARCHITECT_CACHE_DIR"] = str(Path(tmp) / "cache")
        for run, workers in enumerate(order):
            t0 = time.perf_counter()
            m = evaluate(SEED, "search", episodes=n_episodes, workers=workers, out_dir=Path(tmp) / f"r{run}",
                         use_cache=False, progress=False)
            wall = time.perf_counter() - t0
            out[f"walls_{workers}"].append(wall)
            results.append([(r["episode_id"], r["success"], r["steps"]) for r in m["episodes"]])
            if workers in out and out[workers]["wall"] <= wall:
                continue
            out[workers] = {"wall": wall, "sr": m["primary"]["mean"], "n": m["n"], "schedule": m["schedule"],
                            "episode_sum": sum(r["wall_seconds"] for r in m["episodes"]),
                            "load": os.getloadavg()[0]}
    out["identical"] = all(r == results[0] for r in results)
    return out


def plain_episode(runner, graph: dict, episode: dict) -> dict:
    """The runner's own node objects stepped by a bare loop: no logging, no
    budget or output checks, no bookkeeping beyond wiring values."""
    from harness.canvas.graph import split_endpoint

    nodes, ctxs, sim_id = runner.nodes, runner.contexts, runner.sim_id
    shared = runner._shared  # noqa: SLF001 - the episode-wide context state the nodes read
    shared.reset_counters()
    shared.episode = episode
    shared.tick = 0
    wires: dict[str, list] = {nid: [] for nid in nodes}
    for edge in graph["edges"]:
        src, sport = split_endpoint(edge["from"])
        dst, dport = split_endpoint(edge["to"])
        wires[dst].append((dport, src, sport, bool(edge.get("delay"))))
    required = {nid: {p for p, spec in runner.node_types[nid].inputs.items() if spec.required} for nid in nodes}
    for nid in runner.node_ids:
        nodes[nid].reset(ctxs[nid])
    sim = nodes[sim_id]
    sim_out = sim.reset_episode(episode, ctxs[sim_id])
    max_steps = episode.get("max_steps") or graph["budgets"]["max_steps"]
    prev: dict = {}
    steps = ticks = 0
    while not sim.done() and steps < max_steps:
        shared.tick = ticks
        cur = {sim_id: sim_out}
        for nid in runner.order:
            inputs = {}
            for port, src, sport, delayed in wires[nid]:
                values = (prev if delayed else cur).get(src)
                if values is not None and sport in values:
                    inputs[port] = values[sport]
            if required[nid] <= inputs.keys():
                cur[nid] = nodes[nid].step(inputs, ctxs[nid])
        actions = {}
        for port, src, sport, delayed in wires[sim_id]:
            values = (prev if delayed else cur).get(src)
            if values is not None and sport in values:
                actions[port] = values[sport]
        if not actions:
            break
        (port, chunk), = actions.items()
        for action in (chunk if isinstance(chunk, (list, tuple)) else [chunk]):
            sim_out = sim.step({port: action}, ctxs[sim_id])
            steps += 1
            if sim.done() or steps >= max_steps:
                break
        ticks += 1
        prev = cur
    return {"steps": steps, **sim.result()}


def naive_dump_log_class() -> type:
    """A naive JSON episode log, for comparison: each firing's inputs and outputs go through one
    orjson call (arrays as a copy of their bytes, kept), so a value is encoded again wherever
    it is read; no line format, no sharing, nothing written (the runner's flush at the episode's
    end encodes every firing)."""
    import orjson

    from harness.canvas.episode_log import EpisodeLog

    class NaiveDumpLog(EpisodeLog):
        def _encode(self, node, node_type, tick, inputs, outputs, duration_s, *rest):
            self._firings.append(orjson.dumps((node, tick, inputs, outputs, duration_s), self._bytes_of))

        def _bytes_of(self, o):
            self._array_lines.append(o.tobytes())
            return len(self._array_lines)

    return NaiveDumpLog


def bench_overhead(n_episodes: int, rounds: int = 5) -> dict:
    """The four modes on the same episodes, each round running every mode's whole block of
    episodes (as a worker runs them), rounds interleaved with the modes' order alternating. Each
    episode's time is its minimum over the rounds, and a mode's figure their sum: the machine may
    be shared, and its disturbances, short against a round of blocks, seldom spare a whole block
    but often spare one episode. The blocks' own minima are kept beside them (`block`)."""
    from executors import load_executor
    from harness.canvas.episode_log import EpisodeLog
    from harness.canvas.graph import load_graph
    from harness.canvas.runtime import GraphRunner

    ex = load_executor("babyai")
    episodes = ex.episodes("search")[:n_episodes]
    graph = load_graph(SEED)
    runner = GraphRunner(graph, candidate_dir=SEED)
    for ep in episodes[:2]:  # warm up imports and caches
        runner.run_episode(ep)
    modes = ("plain", "runtime", "runtime+log", "runtime+naive")
    naive_log = naive_dump_log_class()  # (made once: a class per episode would be timed with it)
    wall = {mode: [math.inf] * len(episodes) for mode in modes}
    cpu = {mode: [math.inf] * len(episodes) for mode in modes}  # process time: what a loaded machine's wall time hides
    block = dict.fromkeys(modes, math.inf)
    written = [math.inf] * len(episodes)  # runtime+log: its `write_jsonl` alone
    outcomes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(rounds):
            for mode in modes if round_ % 2 == 0 else modes[::-1]:
                res = []
                start = time.perf_counter()
                for i, ep in enumerate(episodes):
                    t0, c0 = time.perf_counter(), time.process_time()
                    if mode == "plain":
                        r = plain_episode(runner, graph, ep)
                    elif mode == "runtime":
                        r = runner.run_episode(ep)
                    elif mode == "runtime+naive":
                        r = runner.run_episode(ep, naive_log())
                    else:
                        log = EpisodeLog()
                        r = runner.run_episode(ep, log)
                        w0 = time.perf_counter()
                        # (a new folder per round, as each evaluation has: replacing a file costs more)
                        log.write_jsonl(Path(tmp) / str(round_) / f"{ep['episode_id'].replace(':', '_')}.jsonl")
                        written[i] = min(written[i], time.perf_counter() - w0)
                    wall[mode][i] = min(wall[mode][i], time.perf_counter() - t0)
                    cpu[mode][i] = min(cpu[mode][i], time.process_time() - c0)
                    res.append((bool(r["success"]), r["steps"]))
                block[mode] = min(block[mode], time.perf_counter() - start)
                outcomes[mode] = res
    runner.close()
    return {"timings": {mode: sum(wall[mode]) for mode in modes}, "cpu": {mode: sum(cpu[mode]) for mode in modes},
            "block": block, "written": sum(written), "rounds": rounds,
            "same_outcomes": all(outcomes[mode] == outcomes["plain"] for mode in modes),
            "steps": sum(s for _, s in outcomes["runtime"]), "n": len(episodes)}


def rows(full: bool) -> list[dict]:
    """Rows for bench/run_all.py. Both sizes: the whole search tier (100 episodes: fewer and process
    start dominates the speed-up); full: 3 runs with 1 worker and 7 with 2 (the spread), reduced: 2
    and 3 (no verdict on the forkserver row) and 10 episodes for the overhead (full 30)."""
    w = bench_workers(None, 3 if full else 2, 7 if full else 3)
    o = bench_overhead(30 if full else 10)
    t = o["timings"]
    sched = w[2]["schedule"]
    spread = statistics.stdev(w["walls_2"])
    later = statistics.median(w["run_commands"][1:])
    return [
        {"metric": "evaluation forkserver start (BabyAI's worker modules preloaded)", "value": w["forkserver"],
         "unit": "s", "target": None, "note": "paid once per process by its first evaluation (an `experiment run`, "
                                               "a run's first command); started before every run below"},
        {"metric": f"search tier wall, {w[1]['n']} episodes, 1 worker", "value": w[1]["wall"], "unit": "s", "target": None},
        {"metric": f"search tier wall, {w[2]['n']} episodes, 2 workers", "value": w[2]["wall"], "unit": "s", "target": None},
        {"metric": f"speed-up 2 vs 1 workers, {w[1]['n']} search episodes", "value": w[1]["wall"] / w[2]["wall"],
         "unit": "x", "target": 1.9, "better": "higher",
         "note": f"best of {len(w['walls_1'])} runs each, alternating (1 worker: "
                 + ", ".join(f"{x:.2f}" for x in w["walls_1"]) + " s; 2 workers: "
                 + ", ".join(f"{x:.2f}" for x in w["walls_2"][:len(w["walls_1"])]) + " s); "
                 f"identical per-episode results in every run: {w['identical']}; best 2-worker run: "
                 f"{sched['order'].replace('_', ' ')}, makespan {sched['makespan_seconds']:.2f} s vs bound "
                 f"{sched['lower_bound_seconds']:.2f} s ({sched['makespan_over_bound']:.2f}x)"},
        {"metric": f"a run's later command: warm forkserver / run-to-run spread of the search tier, 2 workers "
                   f"({len(w['walls_2'])} runs)",
         "value": later / spread if spread > 0 else None, "unit": "x", "target": 1.0,
         "note": f"forkserver to a first forked process: {later:.3f} s (median of the later of "
                 f"{len(w['run_commands'])} commands of one run, each a fresh process; the first, which starts the "
                 f"run's warm forkserver: {w['run_commands'][0]:.3f} s, {w['run_commands'][0] / spread:.1f}x); "
                 f"spread: standard deviation {spread:.3f} s of walls "
                 + ", ".join(f"{x:.2f}" for x in w["walls_2"]) + " s",
         **({} if full else {"no_verdict": f"{len(w['walls_2'])} runs do not estimate a spread (--full: 7)"})},
        {"metric": f"runtime with logging vs plain loop, {o['n']} episodes", "value": t["runtime+log"] / t["plain"],
         "unit": "x", "target": 1.1,
         "note": f"sums of each episode's best of {o['rounds']} rounds; without logging {t['runtime'] / t['plain']:.2f}x; "
                 f"of the time logging adds, writing the file (`write_jsonl`: the lines made and written, each "
                 f"episode's best) is {o['written'] / t['plain']:.1%} of the plain loop's time, the rest the episode's "
                 f"recording and encoding; cpu time {o['cpu']['runtime+log'] / o['cpu']['plain']:.2f}x; best whole blocks "
                 f"{o['block']['runtime+log'] / o['block']['plain']:.2f}x; same outcomes: {o['same_outcomes']}; with a naive "
                 f"JSON log instead (one orjson call per firing, see bench_evaluate.py's doc) "
                 f"{t['runtime+naive'] / t['plain']:.2f}x"},
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=None, help="search-tier episodes (default: all)")
    ap.add_argument("--pairs", type=int, default=2, help="runs with 1 and with 2 workers, alternating (best of each)")
    ap.add_argument("--overhead-episodes", type=int, default=30)
    args = ap.parse_args()

    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, "
          f"load average before: {os.getloadavg()[0]:.2f}")
    w = bench_workers(args.episodes, args.pairs, args.pairs)
    speedup = w[1]["wall"] / w[2]["wall"]
    print(f"\nevaluation forkserver start (paid once per process; before every run): {w['forkserver']:.2f} s; "
          f"in {len(w['run_commands'])} commands of one run (warm forkserver): "
          + ", ".join(f"{x:.3f}" for x in w["run_commands"]) + " s")
    print(f"\n== search tier, seeds/babyai, {w[1]['n']} episodes (cache off, logs on) ==")
    print(f"{'workers':>8} {'wall s':>8} {'success':>8} {'sum of episode s':>17} {'load avg after':>15}")
    for k in (1, 2):
        print(f"{k:>8} {w[k]['wall']:>8.2f} {w[k]['sr']:>8.2%} {w[k]['episode_sum']:>17.2f} {w[k]['load']:>15.2f}")
    print(f"speed-up 2 vs 1 workers: {speedup:.2f}x   (target >= 1.90x); best of {args.pairs} alternating runs each: "
          f"1 worker " + ", ".join(f"{x:.2f}" for x in w["walls_1"]) + " s; 2 workers "
          + ", ".join(f"{x:.2f}" for x in w["walls_2"]) + " s")
    print(f"identical per-episode results in every run: {w['identical']}")
    print("(a sum of episode seconds that grows with 2 workers means the cores were not free: "
          "other load on the machine, see the load average)")

    o = bench_overhead(args.overhead_episodes)
    t = o["timings"]
    print(f"\n== runtime overhead, {o['n']} search episodes, {o['steps']} simulator steps, one process, "
          f"each episode's best of {o['rounds']} interleaved rounds ==")
    print(f"{'mode':>14} {'wall s':>8} {'vs plain':>9} {'steps/s':>9}")
    for mode in ("plain", "runtime", "runtime+log", "runtime+naive"):
        print(f"{mode:>14} {t[mode]:>8.3f} {t[mode] / t['plain']:>8.2f}x {o['steps'] / t[mode]:>9.0f}")
    print(f"canvas runtime with logging vs plain loop: {t['runtime+log'] / t['plain']:.2f}x   (target <= 1.10x); "
          f"cpu time {o['cpu']['runtime+log'] / o['cpu']['plain']:.2f}x; writing the file "
          f"{o['written'] / t['plain']:.1%} of the plain loop's time")
    print(f"same outcomes in all four modes: {o['same_outcomes']}")


if __name__ == "__main__":
    main()

"""Start-up costs: whole-process `architect` commands, and a worker from its
process start to the first tick of its first episode.

    python bench/bench_startup.py [--full] [--modules]

A coding agent calls `architect` dozens of times per iteration and pays the
start-up each time: medians over several whole-process runs of
`architect --help`, `architect validate seeds/babyai/graph.json --json` and
`architect status <run> --json`, next to a bare `python -c pass`. Targets:
validate < 0.2 s, status --json < 0.25 s.

The worker figures are taken the way an evaluation starts its workers (from
the pool's `worker_context`: a forkserver that has imported the worker's
modules and the executor's `worker_preload`, building `GraphEpisodeRunner`
from the worker module), timed from just before the process is started to the
first node firing of the first episode, with the modules the worker imported
itself (`--modules` lists them). The first worker of a process also starts
the forkserver; later ones (every evaluation after the first in a loop) fork
from it: the figure for them is the median of as many later workers as there are
whole-process runs (11 with --full, else 5). Compared with the mean wall time of one
smoke-tier episode (the median of 3 passes): an evaluation of 5 episodes should be
dominated by its episodes.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.executor_api import seed_graph_path  # noqa: E402  (after the path set-up)


def _architect() -> list[str]:
    exe = shutil.which("architect", path=str(Path(sys.executable).parent)) or shutil.which("architect")
    return [exe] if exe else [sys.executable, "-m", "harness.cli"]


def whole_process(argv: list[str], runs: int, env: dict | None = None) -> tuple[float, float]:
    """Median (wall, cpu) seconds of running argv to completion (output discarded);
    cpu = the child's user + system time, which a busy machine inflates less."""
    wall, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        wall.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(wall), statistics.median(cpu)


def _process_row(metric: str, measured: tuple[float, float], target: float | None) -> dict:
    wall, cpu = measured
    return {"metric": metric, "value": wall, "unit": "s", "target": target,
            "note": f"cpu {cpu:.3f} s; {bytecode_state()}"}


def bytecode_state() -> str:
    """Whether the harness's and executors' modules have current bytecode: without it
    every command compiles them (an editable install writes none, and neither does
    Python where PYTHONDONTWRITEBYTECODE is set)."""
    import importlib.util

    sources = [p for folder in ("harness", "executors") for p in (ROOT / folder).rglob("*.py")]
    missing = 0
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        missing += not cached.is_file() or cached.stat().st_mtime < source.stat().st_mtime
    if not missing:
        return "bytecode of harness/ and executors/ current"
    return (f"{missing} of {len(sources)} modules of harness/ and executors/ without current bytecode "
            f"(PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}): each command compiles "
            "those it imports; `python -m compileall -q harness executors` (in the README install) writes it")


def _make_run(tmp: Path) -> tuple[str, dict]:
    """A real run directory (iteration 0 evaluated on one episode) for `status`."""
    env = dict(os.environ, ARCHITECT_RUNS_DIR=str(tmp / "runs"), ARCHITECT_CACHE_DIR=str(tmp / "cache"),
               ARCHITECT_RESULTS_DIR=str(tmp / "results"))
    from harness.rundir.create import init_run

    os.environ.update({k: env[k] for k in ("ARCHITECT_CACHE_DIR", "ARCHITECT_RESULTS_DIR")})
    init_run("random", "babyai", runs_dir=tmp / "runs", run_id="bench", max_iterations=1,
             smoke_episodes=1, eval_episodes=1, seed=0)
    return "bench", env


# -- worker start-up -------------------------------------------------------------------

class _FirstFiring:
    """An episode log that notes the wall clock of the first firing after the
    simulator's reset (the first tick) and records nothing."""

    enabled = True

    def __init__(self):
        self.first_tick: float | None = None
        self.episode = self.result = None

    def forget(self) -> None:
        pass

    def defer(self, node, *args) -> None:  # (what the runner calls at each firing)
        if self.first_tick is None and args[1] is not None:  # args[1]: inputs (None for the simulator's reset)
            self.first_tick = time.time()

    flush = forget


def _worker_child(factory_ref: str, graph_path: str, episode: dict, conn) -> None:
    """What a worker does before its first tick, timed from the inside."""
    inherited = set(sys.modules)  # what the forkserver had loaded, and the main module's imports
    from harness.evaluation.worker import resolve  # the worker module, as a worker imports it
    import json

    ready_imports = time.time()
    runner = resolve(factory_ref)(json.loads(Path(graph_path).read_text()), str(Path(graph_path).parent))
    ready = time.time()
    log = _FirstFiring()
    t0 = time.time()
    result = runner.runner.run_episode(episode, log)
    episode_s = time.time() - t0
    conn.send({"imports_done": ready_imports, "ready": ready, "first_tick": log.first_tick, "episode_s": episode_s,
               "modules": sorted(sys.modules), "imported": sorted(set(sys.modules) - inherited),
               "steps": result["steps"]})


def worker_startups(graph_path: Path, count: int = 2) -> list[dict]:
    """`count` workers started one after another the way the evaluation's pool
    starts them (`worker_context` with the executor's preload list): the first
    also starts the forkserver, the later ones fork from it."""
    from executors import load_executor
    from harness.evaluation.evaluator import GRAPH_FACTORY
    from harness.evaluation.pool import worker_context

    ex = load_executor("babyai")
    episode = ex.episodes("smoke")[0]
    t_start = time.time()  # the first worker's time includes the forkserver's start
    ctx = worker_context(ex.spec.worker_modules)
    out = []
    for i in range(count):
        parent, child = ctx.Pipe()
        if i:
            t_start = time.time()
        proc = ctx.Process(target=_worker_child, args=(GRAPH_FACTORY, str(graph_path), episode, child))
        proc.start()
        got = parent.recv()
        proc.join()
        got["to_first_tick"] = got["first_tick"] - t_start
        got["to_ready"] = got["ready"] - t_start
        got["to_imports"] = got["imports_done"] - t_start
        got["start_method"] = ctx.get_start_method()
        out.append(got)
    return out


def smoke_episode_seconds(graph_path: Path) -> float:
    """Mean wall seconds of one smoke-tier episode of the graph, in this process (the median of 3 passes)."""
    from executors import load_executor
    from harness.canvas.graph import load_graph
    from harness.canvas.runtime import GraphRunner

    episodes = load_executor("babyai").episodes("smoke")
    with GraphRunner(load_graph(graph_path), candidate_dir=graph_path.parent) as runner:
        runner.run_episode(episodes[0])  # warm
        passes = []
        for _ in range(3):  # (the median pass: the machine may be shared)
            t0 = time.perf_counter()
            for episode in episodes:
                runner.run_episode(episode)
            passes.append((time.perf_counter() - t0) / len(episodes))
        return statistics.median(passes)


def rows(full: bool) -> list[dict]:
    runs = 11 if full else 5
    seed = seed_graph_path("babyai")
    arch = _architect()
    out = [_process_row(f"whole process: python -c pass (median of {runs})",
                        whole_process([sys.executable, "-c", "pass"], runs), None),
           _process_row(f"whole process: architect --help (median of {runs})",
                        whole_process(arch + ["--help"], runs), None),
           _process_row(f"whole process: architect validate <seed graph> --json (median of {runs})",
                        whole_process(arch + ["validate", str(seed), "--json"], runs), 0.2)]
    first, *laters = worker_startups(seed, 1 + runs)  # before anything in this process has started a forkserver
    later = sorted(laters, key=lambda w: w["to_first_tick"])[len(laters) // 2]  # the median later worker
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        run_id, env = _make_run(Path(tmp))
        out.append(_process_row(f"whole process: architect status <run> --json (median of {runs})",
                                whole_process(arch + ["status", run_id, "--json"], runs, env), 0.25))
    episode_s = smoke_episode_seconds(seed)
    for label, w in (("the first of a process (starts the forkserver)", first),
                     (f"a later one (median of {len(laters)})", later)):
        top = sorted({m.split(".")[0] for m in w["imported"] if not m.startswith("_")})
        out.append({"metric": f"worker, {label}: process start to first tick of its first episode",
                    "value": w["to_first_tick"], "unit": "s", "target": None,
                    "note": f"{w['start_method']}; imports done at {w['to_imports']:.3f} s, runner built at "
                            f"{w['to_ready']:.3f} s; {len(w['modules'])} modules loaded, {len(w['imported'])} "
                            f"imported by the worker itself: {', '.join(top) or 'none'}"})
    out.append({"metric": "worker start-up vs 5 smoke episodes (start-up / episodes' time), a later worker",
                "value": later["to_first_tick"] / (5 * episode_s), "unit": "x", "target": 1.0,
                "note": f"one smoke episode: {episode_s:.3f} s (mean, warm, one process, median of 3 passes); the "
                        "later workers: " + ", ".join(f"{w['to_first_tick']:.3f}" for w in laters)
                        + " s; the first worker of a "
                        f"process: {first['to_first_tick'] / (5 * episode_s):.1f}x"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="11 runs per command instead of 5")
    parser.add_argument("--modules", action="store_true", help="list every module a worker imports before its first tick")
    args = parser.parse_args()
    if args.modules:
        for w in worker_startups(seed_graph_path("babyai")):
            print(f"# {len(w['imported'])} imported by the worker itself", *w["imported"], sep="\n")
        return
    from run_all import print_table

    print_table(rows(args.full))


if __name__ == "__main__":
    main()

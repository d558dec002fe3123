"""Cost of the sandboxes: (1) a candidate node type run isolated (its sandbox
process, harness.canvas.isolated) vs the same file imported as a built-in
type, per firing (p50 over single firings); (2) the end-to-end slowdown of the
BabyAI seed whose main planner (`act`, babyai.SubgoalExecutor) is re-authored
as a candidate node type `extends=` the built-in (the two runners alternate
episode by episode, so a load that changes during the run weighs on both
alike); (3) a context-harness call
in its sandbox process vs the same restricted function called in-process;
(4) `validate` of a nodeset candidate (the babyai-llm seed): its files' first
declaration (a sandbox process loads them) and a copy of it in a new folder,
as a proposer stages one (the declaration of the same bytes is reused).

    python bench/bench_sandbox.py [--firings 20000] [--episodes 100] [--calls 2000]

Rows for bench/run_all.py: `rows(full)` (full: the sizes above, the whole
search tier; reduced: a tenth of the firings and calls, 20 search episodes).

Node (1) is the babyai-llm seed's own nodeset/view_text.py on real BabyAI
observations, plus a minimal pass-through candidate node (the boundary's own
cost on small port values). Goals (issue 22): isolated overhead ≤ 100 µs at
p50 for small port values; the seed with an isolated planner ≤ 1.3x the
seed's time on BabyAI's search tier. Context-harness call overhead: small
against a model call (~100 ms+).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import PROJECT_ROOT  # noqa: E402  (after the path set-up)
from harness.canvas.context import Context, EpisodeState  # noqa: E402
from harness.canvas.registry import Registry, _target, default_registry, for_graph  # noqa: E402
from harness.models.context_harness import ContextHarness, SandboxedHarness  # noqa: E402
from harness.models.probes import probe_histories  # noqa: E402

SEED = PROJECT_ROOT / "seeds" / "babyai-llm"
TINY = '''from harness.canvas.registry import Node, node_type


@node_type("Tiny", inputs={"value": "Any"}, outputs={"value": "Any"}, config_schema={"type": "object"},
           doc="pass-through")
class Tiny(Node):
    def step(self, inputs, ctx):
        return {"value": inputs["value"]}
'''


def _unrestricted(path: Path, name: str):
    base = default_registry()
    base.ensure_executor("babyai")  # its roles (a candidate type's role must be an existing one), as for_graph does
    overlay = Registry(parent=base, namespace="candidate")
    _target.registry = overlay
    try:
        spec = importlib.util.spec_from_file_location(f"bench_plain_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    finally:
        _target.registry = None
    return overlay.get(f"candidate.{name}").cls


def _isolated(folder: Path, name: str):
    registry = for_graph({"executor": "babyai"}, folder)
    assert not registry.load_errors, registry.load_errors
    return registry.get(f"candidate.{name}").cls


def _per_firing(cls, inputs_list, firings: int) -> float:
    """µs per firing at p50 (each firing timed on its own)."""
    node = cls("n", {})
    ctx = Context("n", EpisodeState({}, None, None))
    times = []
    clock = time.perf_counter
    for i in range(firings):
        start = clock()
        node.step(inputs_list[i % len(inputs_list)], ctx)
        times.append(clock() - start)
    node.close()
    return statistics.median(times) * 1e6


def _observations(count: int = 50) -> list[dict]:
    import gymnasium as gym
    import minigrid  # noqa: F401  (registers the BabyAI environments)

    env = gym.make("BabyAI-GoToLocal-v0")
    obs, _ = env.reset(seed=1)
    out = []
    for t in range(count):
        out.append({"observation": obs})
        obs, *_ = env.step(t % 3)
    return out


def measure_nodes(firings: int) -> dict:
    """Per-firing µs at p50, built in and isolated: the seed's ViewText (`firings`
    firings) and the pass-through Tiny (`firings`)."""
    observations = _observations()
    view_text = _unrestricted(SEED / "nodeset" / "view_text.py", "ViewText")
    out = {"firings": firings, "viewtext": (_per_firing(view_text, observations, firings),
                                            _per_firing(_isolated(SEED, "ViewText"), observations, firings))}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "nodeset").mkdir()
        (folder / "nodeset" / "tiny.py").write_text(TINY)
        values = [{"value": i} for i in range(10)]
        out["tiny"] = (_per_firing(_unrestricted(folder / "nodeset" / "tiny.py", "Tiny"), values, firings),
                       _per_firing(_isolated(folder, "Tiny"), values, firings))
    return out


PLANNER = '''from harness.canvas.registry import Node, node_type


@node_type("Executor", extends="babyai.SubgoalExecutor", doc="The built-in subgoal executor, as a candidate type.")
class Executor(Node):
    """Plans and executes subgoals exactly as babyai.SubgoalExecutor does (it adds nothing)."""
'''


def measure_seed(episodes: int) -> dict:
    """Seconds to run the first `episodes` of BabyAI's search tier with the babyai seed, and with
    its planner `act` as an isolated candidate type extending the built-in (one runner each). The
    two runners take turns episode by episode, so that both meet the same load of the machine."""
    import contextlib
    import json

    from executors import load_executor
    from harness.canvas.runtime import GraphRunner

    tier = load_executor("babyai").episodes("search")[:episodes]
    seed = PROJECT_ROOT / "seeds" / "babyai"
    graph = json.loads((seed / "graph.json").read_text())
    out = {"episodes": len(tier)}
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        folder = Path(tmp)
        (folder / "nodeset").mkdir()
        (folder / "nodeset" / "executor.py").write_text(PLANNER)
        isolated = json.loads(json.dumps(graph))
        isolated["nodes"]["act"]["type"] = "candidate.Executor"
        runners = {"builtin": stack.enter_context(GraphRunner(graph, candidate_dir=seed)),
                   "isolated": stack.enter_context(GraphRunner(isolated, candidate_dir=folder))}
        results: dict[str, list] = {label: [] for label in runners}
        seconds = dict.fromkeys(runners, 0.0)
        for episode in tier:
            for label, runner in runners.items():
                start = time.perf_counter()
                results[label].append(runner.run_episode(dict(episode)))
                seconds[label] += time.perf_counter() - start
        for label, done in results.items():
            out[label] = seconds[label]
            out[label + "_success"] = sum(r["success"] for r in done)
            out[label + "_firings"] = sum(r["ticks"] for r in done)
    return out


HARNESS_MODES = (("inproc", "in-process (restricted, no process limits)"), ("sandboxed", "sandbox process"))


def measure_harness(calls: int) -> dict:
    """µs per context-harness call (median of 3 runs of `calls`), in-process and in
    its sandbox process, and the sandbox process's start (its first call), in s."""
    source = (SEED / "build_context.py").read_text()
    history = probe_histories("babyai")[2][1]  # a typical history of 5 rounds
    fns = {"inproc": ContextHarness(source), "sandboxed": SandboxedHarness(source)}
    start = time.perf_counter()
    fns["sandboxed"](history)
    out = {"calls": calls, "first": time.perf_counter() - start}
    for mode, _ in HARNESS_MODES:
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(calls):
                fns[mode](history)
            runs.append((time.perf_counter() - start) / calls)
        out[mode] = statistics.median(runs) * 1e6
    fns["sandboxed"].close()
    return out


def measure_validation(copies: int) -> dict:
    """ms per `validate_graph` of the babyai-llm seed (its nodeset/view_text.py): the first
    declaration (a nodeset file of bytes this process never saw), then copies in new folders."""
    import json
    import shutil

    from harness.canvas.validate import validate_graph

    out = {"copies": copies}
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "fresh"
        shutil.copytree(SEED, fresh)
        with open(fresh / "nodeset" / "view_text.py", "a") as fh:
            fh.write(f"\n# bench {time.time_ns()}\n")  # bytes no earlier run declared
        graph = json.loads((fresh / "graph.json").read_text())
        start = time.perf_counter()
        validate_graph(graph, candidate_dir=fresh)
        out["first"] = (time.perf_counter() - start) * 1e3
        times = []
        for k in range(copies):
            copy = Path(tmp) / f"copy{k}"
            shutil.copytree(fresh, copy)
            start = time.perf_counter()
            validate_graph(graph, candidate_dir=copy)
            times.append((time.perf_counter() - start) * 1e3)
        out["copy"] = statistics.median(times)
    return out


def bench_validation(copies: int) -> None:
    m = measure_validation(copies)
    print(f"validate a nodeset candidate (babyai-llm seed): first declaration {m['first']:.0f} ms; a staged copy, "
          f"median of {m['copies']}: {m['copy']:.1f} ms (goal < 50 ms)")


def bench_nodes(firings: int) -> None:
    m = measure_nodes(firings)
    plain, isolated = m["viewtext"]
    print(f"candidate node ViewText (seed view_text.py), p50 per firing: {plain:.1f} µs built in, {isolated:.1f} µs "
          f"isolated: +{isolated - plain:.1f} µs")
    plain, isolated = m["tiny"]
    print(f"candidate node Tiny (pass-through), p50 per firing: {plain:.2f} µs built in, {isolated:.1f} µs isolated: "
          f"+{isolated - plain:.1f} µs (goal ≤ 100 µs)")


def bench_seed(episodes: int) -> None:
    m = measure_seed(episodes)
    print(f"babyai seed, {m['episodes']} search episodes: {m['builtin']:.1f} s built in "
          f"({m['builtin_success']} solved), {m['isolated']:.1f} s with `act` isolated ({m['isolated_success']} "
          f"solved): {m['isolated'] / m['builtin']:.2f}x (goal ≤ 1.3x)")


def bench_harness(calls: int) -> None:
    m = measure_harness(calls)
    for mode, label in HARNESS_MODES:
        print(f"context harness call, seed build_context.py, 5-round history, {label}: "
              f"{m[mode]:.0f} µs per call")
    print(f"sandbox process start (first call): {m['first'] * 1e3:.0f} ms")


def rows(full: bool) -> list[dict]:
    """Rows for bench/run_all.py (full: 20,000 firings, the 100 search episodes and 2,000 calls, as main's
    defaults; reduced: a tenth of the firings and calls, 20 search episodes)."""
    firings, episodes, calls = (20000, 100, 2000) if full else (2000, 20, 200)
    nodes = measure_nodes(firings)
    seed = measure_seed(episodes)
    harness = measure_harness(calls)
    validation = measure_validation(20)
    (vt_plain, vt_isolated), (tiny_plain, tiny_isolated) = nodes["viewtext"], nodes["tiny"]
    return [
        {"metric": f"isolated node overhead per firing at p50, pass-through node ({firings:,} firings)",
         "value": tiny_isolated - tiny_plain, "unit": "µs", "target": 100.0,
         "note": f"{tiny_plain:.2f} µs built in, {tiny_isolated:.1f} µs in its sandbox process"},
        {"metric": f"isolated node overhead per firing at p50, seed ViewText on BabyAI observations ({firings:,} firings)",
         "value": vt_isolated - vt_plain, "unit": "µs", "target": None,
         "note": f"{vt_plain:.1f} µs built in, {vt_isolated:.1f} µs in its sandbox process"},
        {"metric": f"babyai seed with its planner `act` isolated vs built in, {seed['episodes']} search episodes",
         "value": seed["isolated"] / seed["builtin"], "unit": "x", "target": 1.3,
         "note": f"{seed['builtin']:.1f} s built in, {seed['isolated']:.1f} s isolated; solved "
                 f"{seed['builtin_success']} and {seed['isolated_success']} (the same agent)"},
        {"metric": f"context-harness call in its sandbox process, seed build_context.py (median of 3 x {calls:,})",
         "value": harness["sandboxed"], "unit": "µs", "target": None,
         "note": f"in-process (restricted, no process limits) {harness['inproc']:.0f} µs; goal: small against a "
                 "model call (~100 ms+)"},
        {"metric": "context-harness sandbox process start (its first call)", "value": harness["first"] * 1e3,
         "unit": "ms", "target": None},
        {"metric": "validate a staged copy of a nodeset candidate, babyai-llm seed (median of 20)",
         "value": validation["copy"], "unit": "ms", "target": 50.0,
         "note": f"the first declaration of its files (a sandbox process loads them): {validation['first']:.0f} ms"},
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--firings", type=int, default=20000)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    bench_nodes(args.firings)
    bench_seed(args.episodes)
    bench_harness(args.calls)
    bench_validation(20)


if __name__ == "__main__":
    main()

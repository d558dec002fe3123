"""Cost of the sandboxes: (1) a candidate node type run restricted vs the same
file imported unrestricted, per firing; (2) a context-harness call in its
sandbox process vs the same restricted function called in-process.

    python bench/bench_sandbox.py [--firings 20000] [--calls 2000]

Node (1) is the babyai-llm seed's own nodeset/view_text.py on real BabyAI
observations, plus a minimal pass-through candidate node (the guard cost on
a node that does almost nothing). Targets: restricted node overhead well
under the 10 µs-per-firing runtime budget for a small node; context-harness
call overhead small against a model call (~100 ms+).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

import harness.cli  # noqa: F401  (registers every node namespace)
from harness import PROJECT_ROOT
from harness.canvas.context import Context, EpisodeState
from harness.canvas.registry import Registry, _target, default_registry, for_graph
from harness.models.context_harness import ContextHarness, SandboxedHarness
from harness.models.probes import probe_histories

SEED = PROJECT_ROOT / "executors" / "babyai" / "seeds" / "babyai-llm"
TINY = '''from harness.canvas.registry import Node, node_type


@node_type("Tiny", inputs={"value": "Any"}, outputs={"value": "Any"}, config_schema={"type": "object"},
           role="utility", doc="pass-through")
class Tiny(Node):
    def step(self, inputs, ctx):
        return {"value": inputs["value"]}
'''


def _unrestricted(path: Path, name: str):
    overlay = Registry(parent=default_registry(), namespace="candidate")
    _target.registry = overlay
    try:
        spec = importlib.util.spec_from_file_location(f"bench_plain_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    finally:
        _target.registry = None
    return overlay.get(f"candidate.{name}").cls


def _restricted(folder: Path, name: str):
    registry = for_graph({"executor": "babyai"}, folder)
    assert not registry.load_errors, registry.load_errors
    return registry.get(f"candidate.{name}").cls


def _per_firing(cls, inputs_list, firings: int) -> float:
    node = cls("n", {})
    ctx = Context("n", EpisodeState({}, None, None))
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for i in range(firings):
            node.step(inputs_list[i % len(inputs_list)], ctx)
        runs.append((time.perf_counter() - start) / firings)
    return statistics.median(runs) * 1e6


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


def bench_nodes(firings: int) -> None:
    observations = _observations()
    plain = _per_firing(_unrestricted(SEED / "nodeset" / "view_text.py", "ViewText"), observations, firings)
    guarded = _per_firing(_restricted(SEED, "ViewText"), observations, firings)
    print(f"candidate node ViewText (seed view_text.py): {plain:.1f} µs unrestricted, {guarded:.1f} µs restricted "
          f"per firing: +{guarded - plain:.1f} µs ({guarded / plain:.2f}x)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "nodeset").mkdir()
        (folder / "nodeset" / "tiny.py").write_text(TINY)
        values = [{"value": i} for i in range(10)]
        plain = _per_firing(_unrestricted(folder / "nodeset" / "tiny.py", "Tiny"), values, firings * 10)
        guarded = _per_firing(_restricted(folder, "Tiny"), values, firings * 10)
    print(f"candidate node Tiny (pass-through): {plain:.2f} µs unrestricted, {guarded:.2f} µs restricted per firing: "
          f"+{guarded - plain:.2f} µs")


def bench_harness(calls: int) -> None:
    source = (SEED / "build_context.py").read_text()
    history = probe_histories("babyai")[2][1]  # a typical history of 5 rounds
    inproc = ContextHarness(source)
    sandboxed = SandboxedHarness(source)
    start = time.perf_counter()
    sandboxed(history)
    first = time.perf_counter() - start
    for label, fn in (("in-process (restricted, no process limits)", inproc), ("sandbox process", sandboxed)):
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(calls):
                fn(history)
            runs.append((time.perf_counter() - start) / calls)
        print(f"context harness call, seed build_context.py, 5-round history, {label}: "
              f"{statistics.median(runs) * 1e6:.0f} µs per call")
    print(f"sandbox process start (first call): {first * 1e3:.0f} ms")
    sandboxed.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--firings", type=int, default=20000)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    bench_nodes(args.firings)
    bench_harness(args.calls)


if __name__ == "__main__":
    main()

"""Cost of the sandboxes: (1) a candidate node type run restricted vs the same
file imported unrestricted, per firing; (2) a context-harness call in its
sandbox process vs the same restricted function called in-process.

    python bench/bench_sandbox.py [--firings 20000] [--calls 2000]

Rows for bench/run_all.py: `rows(full)` (full: the sizes above; reduced: a
tenth of them).

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


def measure_nodes(firings: int) -> dict:
    """Per-firing µs, unrestricted and restricted: the seed's ViewText (`firings`
    firings, median of 5 runs) and the pass-through Tiny (10 x `firings`)."""
    observations = _observations()
    view_text = _unrestricted(SEED / "nodeset" / "view_text.py", "ViewText")
    out = {"firings": firings, "viewtext": (_per_firing(view_text, observations, firings),
                                            _per_firing(_restricted(SEED, "ViewText"), observations, firings))}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "nodeset").mkdir()
        (folder / "nodeset" / "tiny.py").write_text(TINY)
        values = [{"value": i} for i in range(10)]
        out["tiny"] = (_per_firing(_unrestricted(folder / "nodeset" / "tiny.py", "Tiny"), values, firings * 10),
                       _per_firing(_restricted(folder, "Tiny"), values, firings * 10))
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


def bench_nodes(firings: int) -> None:
    m = measure_nodes(firings)
    plain, guarded = m["viewtext"]
    print(f"candidate node ViewText (seed view_text.py): {plain:.1f} µs unrestricted, {guarded:.1f} µs restricted "
          f"per firing: +{guarded - plain:.1f} µs ({guarded / plain:.2f}x)")
    plain, guarded = m["tiny"]
    print(f"candidate node Tiny (pass-through): {plain:.2f} µs unrestricted, {guarded:.2f} µs restricted per firing: "
          f"+{guarded - plain:.2f} µs")


def bench_harness(calls: int) -> None:
    m = measure_harness(calls)
    for mode, label in HARNESS_MODES:
        print(f"context harness call, seed build_context.py, 5-round history, {label}: "
              f"{m[mode]:.0f} µs per call")
    print(f"sandbox process start (first call): {m['first'] * 1e3:.0f} ms")


def rows(full: bool) -> list[dict]:
    """Rows for bench/run_all.py (full: 20,000 firings and 2,000 calls, as main's defaults; reduced: a tenth)."""
    firings, calls = (20000, 2000) if full else (2000, 200)
    nodes = measure_nodes(firings)
    harness = measure_harness(calls)
    (vt_plain, vt_guarded), (tiny_plain, tiny_guarded) = nodes["viewtext"], nodes["tiny"]
    return [
        {"metric": f"restricted node overhead per firing, seed ViewText (median of 5 x {firings:,} firings)",
         "value": vt_guarded - vt_plain, "unit": "µs", "target": None,
         "note": f"{vt_plain:.1f} µs unrestricted, {vt_guarded:.1f} µs restricted ({vt_guarded / vt_plain:.2f}x)"},
        {"metric": f"restricted node overhead per firing, pass-through node (median of 5 x {10 * firings:,} firings)",
         "value": tiny_guarded - tiny_plain, "unit": "µs", "target": 10.0,
         "note": f"{tiny_plain:.2f} µs unrestricted, {tiny_guarded:.2f} µs restricted; goal: well under the "
                 "runtime's 10 µs-per-firing budget"},
        {"metric": f"context-harness call in its sandbox process, seed build_context.py (median of 3 x {calls:,})",
         "value": harness["sandboxed"], "unit": "µs", "target": None,
         "note": f"in-process (restricted, no process limits) {harness['inproc']:.0f} µs; goal: small against a "
                 "model call (~100 ms+)"},
        {"metric": "context-harness sandbox process start (its first call)", "value": harness["first"] * 1e3,
         "unit": "ms", "target": None},
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--firings", type=int, default=20000)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    bench_nodes(args.firings)
    bench_harness(args.calls)


if __name__ == "__main__":
    main()

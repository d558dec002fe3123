"""Modules loaded by `import harness.canvas`, `import harness.fileio` and one
worker start-up (the worker module plus one runner built for the BabyAI seed
graph), each measured in a fresh interpreter.

    python bench/bench_imports.py
"""

from __future__ import annotations

import json
import subprocess
import sys

CASES = {
    "import harness.canvas": "import harness.canvas",
    "import harness.fileio": "import harness.fileio",
    "worker start-up (babyai seed graph)": (
        "import json\n"
        "from harness.evaluation.worker import resolve\n"
        "from harness.executor_api import seed_graph_path\n"
        "graph = json.loads(seed_graph_path('babyai').read_text())\n"
        "runner = resolve('harness.evaluation.runners:GraphEpisodeRunner')(graph=graph, candidate_dir=None)\n"
        "runner.close()\n"
    ),
}

PRE_CHANGE_WORKER = (  # the same start-up before seeds moved into the executor package
    "import json\n"
    "from pathlib import Path\n"
    "from harness.evaluation.worker import resolve\n"
    "import harness\n"
    "graph = json.loads((Path(harness.PROJECT_ROOT) / 'seeds' / 'babyai' / 'graph.json').read_text())\n"
    "runner = resolve('harness.evaluation.runners:GraphEpisodeRunner')(graph=graph, candidate_dir=None)\n"
    "runner.close()\n"
)


def count_modules(code: str) -> int:
    probe = code + "\nimport sys, json\nprint(json.dumps(len(sys.modules)))\n"
    baseline = "import sys, json\nprint(json.dumps(len(sys.modules)))\n"
    base = int(subprocess.run([sys.executable, "-c", baseline], capture_output=True, text=True, check=True).stdout)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"probe failed: {out.stderr.strip().splitlines()[-1]}")
    return int(out.stdout.strip().splitlines()[-1]) - base


def rows(full: bool) -> list[dict]:
    """Rows for bench/run_all.py: modules loaded per case (figures, no target)."""
    return [{"metric": f"modules loaded: {name}", "value": count_modules(code), "target": None}
            for name, code in CASES.items()]


def main() -> None:
    try:
        import harness.executor_api  # noqa: F401
        cases = CASES
    except ImportError:
        cases = dict(CASES)
        cases["worker start-up (babyai seed graph)"] = PRE_CHANGE_WORKER
    for name, code in cases.items():
        print(f"{name}: {count_modules(code)} modules loaded (beyond a bare interpreter)")


if __name__ == "__main__":
    main()

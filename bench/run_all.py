"""Every benchmark in bench/, one table: metric, measured, target, met or missed.

    python bench/run_all.py            # reduced sizes: a few minutes on 2 cores
    python bench/run_all.py --full     # the sizes the issues state
    python bench/run_all.py --only bench_canvas.py,bench_startup.py
    python bench/run_all.py --json     # the rows as one JSON object

Each `bench/bench_*.py` that defines `rows(full: bool) -> list[dict]` adds its
rows (the convention is in bench/README.md); each runs in its own Python
process, so one benchmark's imports and environment do not touch the next.
A file without `rows` is listed as such (run it directly). The load average
is printed at the start and the end of the run, and before each benchmark:
on a shared machine, a high load makes wall times larger than the code is.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
_ROW_PREFIX = "@@row "  # a child's row lines on stdout


NO_VERDICT = "no verdict at reduced size"


def met(row: dict) -> bool | None:
    """Whether the row meets its target (None: no target, nothing measured, or a size at which the
    target means nothing: a row's `no_verdict`)."""
    value, target = row.get("value"), row.get("target")
    if target is None or row.get("no_verdict") or value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(target, bool):
        return value == target
    return value < target if row.get("better", "lower") == "lower" else value >= target


def format_value(value, unit: str = "") -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        text = f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    else:
        text = str(value)
    return f"{text} {unit}".strip()


def format_target(row: dict) -> str:
    target = row.get("target")
    if target is None:
        return ""
    if isinstance(target, bool):
        return "yes" if target else "no"
    return ("< " if row.get("better", "lower") == "lower" else "≥ ") + format_value(target, row.get("unit", ""))


def print_table(rows: list[dict], file=None) -> None:
    """The rows as an aligned text table."""
    file = file or sys.stdout
    header = ("benchmark", "metric", "measured", "target", "")
    cells = [header] + [(r.get("bench", ""), r["metric"], format_value(r.get("value"), r.get("unit", "")),
                         format_target(r), NO_VERDICT if r.get("no_verdict") else
                         {True: "met", False: "MISSED", None: ""}[met(r)]) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    for i, c in enumerate(cells):
        print("  ".join(x.ljust(w) for x, w in zip(c, widths)).rstrip(), file=file)
        if i == 0:
            print("  ".join("-" * w for w in widths), file=file)
    for r in rows:
        note = "; ".join(filter(None, (r.get("note"), r.get("no_verdict") and f"{NO_VERDICT}: {r['no_verdict']}")))
        if note:
            print(f"  [{r.get('bench', '')}] {r['metric']}: {note}", file=file)


def emit(rows: list[dict]) -> None:
    """In a child process: hand the rows to run_all."""
    for row in rows:
        print(_ROW_PREFIX + json.dumps(row), flush=True)


def _run_one(name: str, full: bool) -> None:
    """Child process: import bench/<name> and emit its rows."""
    import importlib.util

    sys.path.insert(0, str(BENCH_DIR))
    sys.path.insert(0, str(ROOT))
    spec = importlib.util.spec_from_file_location(Path(name).stem, BENCH_DIR / name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # so that its functions pickle (spawned processes)
    spec.loader.exec_module(module)
    rows = getattr(module, "rows", None)
    if rows is None:
        emit([{"metric": "no rows(full) in this file: run it directly", "value": None}])
        return
    emit(rows(full))


def _bench_files(only: str | None) -> list[str]:
    names = sorted(p.name for p in BENCH_DIR.glob("bench_*.py"))
    if only:
        wanted = [n.strip() for n in only.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in names]
        if unknown:
            sys.exit(f"run_all: no such benchmark {', '.join(unknown)} in bench/ (have: {', '.join(names)})")
        names = wanted
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="the sizes the issues state (long)")
    parser.add_argument("--only", help="comma-separated bench file names")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # child mode
    args = parser.parse_args()
    if args.one:
        _run_one(args.one, args.full)
        return

    started = time.time()
    load_start = os.getloadavg()
    print(f"run_all: {'full' if args.full else 'reduced'} sizes, {os.cpu_count()} cores, python "
          f"{sys.version.split()[0]}, load average at start {load_start[0]:.2f} {load_start[1]:.2f} "
          f"{load_start[2]:.2f}", file=sys.stderr)
    rows: list[dict] = []
    for name in _bench_files(args.only):
        load = os.getloadavg()[0]
        print(f"run_all: {name} (load {load:.2f}) ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        command = [sys.executable, str(Path(__file__).resolve()), "--one", name] + (["--full"] if args.full else [])
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        got = [json.loads(line[len(_ROW_PREFIX):]) for line in proc.stdout.splitlines()
               if line.startswith(_ROW_PREFIX)]
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            got.append({"metric": "benchmark failed", "value": None, "note": last[:300]})
        for row in got:
            row["bench"] = name
            row["load_before"] = round(load, 2)
        rows.extend(got)
        print(f"run_all: {name} done in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    load_end = os.getloadavg()
    summary = {"full": args.full, "cores": os.cpu_count(), "load_start": load_start, "load_end": load_end,
               "seconds": round(time.time() - started, 1), "rows": rows,
               "met": sum(met(r) is True for r in rows), "missed": sum(met(r) is False for r in rows)}
    if args.json:
        print(json.dumps(summary))
        return
    print_table(rows)
    print(f"\n{summary['met']} met, {summary['missed']} missed; {summary['seconds']} s; load average "
          f"at start {load_start[0]:.2f}, at end {load_end[0]:.2f} (1-minute; {os.cpu_count()} cores: a load "
          f"above that means the wall times above are inflated)")


if __name__ == "__main__":
    main()

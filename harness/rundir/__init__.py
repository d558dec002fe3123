"""Run directories: each search run is its own git repository under runs/<run-id>/.

`open_run(ref)` resolves and recovers a run; `stage`, `check`, `smoke`,
`evaluate`, `commit`, `discard`, `rerun` and `loop` implement one iteration and
the offline loop. See docs/contracts.md, section "Run directory".
"""

from harness.rundir.layout import RunPaths, default_runs_dir, resolve_run

__all__ = ["RunPaths", "default_runs_dir", "resolve_run"]

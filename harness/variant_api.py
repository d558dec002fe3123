"""The search-variant plug-in contract and discovery (docs/contracts.md).

A variant publishes one `VariantSpec` under the entry-point group
`architect.variants`:

    [project.entry-points."architect.variants"]
    kdloop = "harness.variants.kdloop:VARIANT"

The module named there must be light: discovery imports it (the package's
`__init__`, with its helpers, CLI group and headless driver in modules of their
own). `architect init` accepts only discovered variants; how `architect loop`
runs one is decided here (`VariantSpec.run_mode`): its headless driver runs the
whole run, else the harness loop runs its offline proposer, else only the
Claude Code skill named by `skill` can drive it.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import NamedTuple

from harness.errors import VariantError
from harness.plugins import load_ref, load_specs

ENTRY_POINT_GROUP = "architect.variants"
FITNESS_RULES = {
    "mean": "mean of the primary metric over the episodes, as a percentage",
    "bootstrap": "mean plus a bootstrap confidence interval of the mean (95 %, median)",
}
COMMAND_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
HEADLESS, OFFLINE, SKILL = "headless", "offline", "skill"


class HeadlessResult(NamedTuple):
    """What a headless driver hands back: the command's JSON object and its human summary."""

    payload: dict
    text: str


@dataclass(frozen=True)
class VariantSpec:
    name: str
    skill: str  # the skill file that drives it, relative to the project root
    fitness: str  # a key of FITNESS_RULES
    max_iterations: int  # the iteration cap after iteration 0 (the study's budget)
    offline_proposer: str | None = None  # "module:attr"(staging, seed, attempt, seen) -> Proposal
    # "module:attr"(executor_or_seed, *, run_id, resume, config_path, scripted_models, seed, smoke_episodes,
    # eval_episodes, runs_dir, say) -> HeadlessResult: runs a whole run with the variant's own schedule
    headless_driver: str | None = None
    # top-level `architect` command name -> "module:attr" of its click command or group (the helpers
    # its skill calls); the module is imported only when that command runs or `--help` lists it
    commands: dict[str, str] = field(default_factory=dict)
    # "module:attr"(run_paths) -> None: brings the variant's memory up to date once `architect commit`
    # or `discard` has succeeded (idempotent and derived from the ledger, so a crash before it is repaired
    # the next time it runs)
    attempt_ended: str | None = None

    def problems(self) -> list[str]:
        out = []
        if self.fitness not in FITNESS_RULES:
            out.append(f"fitness {self.fitness!r} is not one of {', '.join(FITNESS_RULES)}")
        if self.max_iterations < 0:
            out.append("max_iterations must be >= 0")
        for command, ref in self.commands.items():
            if not COMMAND_NAME.match(command):
                out.append(f"command name {command!r} must be lower-case letters, digits and '-'")
            if ":" not in ref:
                out.append(f"command {command!r}: {ref!r} is not a \"module:attr\" reference")
        return out

    @property
    def run_mode(self) -> str:
        """How `architect loop` runs it: HEADLESS (its own driver), OFFLINE (the harness loop with
        its offline proposer) or SKILL (only its Claude Code skill drives it)."""
        if self.headless_driver is not None:
            return HEADLESS
        return OFFLINE if self.offline_proposer is not None else SKILL

    def loop_mode(self, executor: str, *, schedule_options: bool, driver_options: bool) -> str:
        """The run mode for `architect loop VARIANT EXECUTOR`, refusing options that do not apply:
        `schedule_options` (--iterations/--max-iterations/--max-skips/--tier given), `driver_options`
        (--config/--scripted-models given)."""
        mode = self.run_mode
        if mode == HEADLESS and schedule_options:
            raise VariantError(f"{self.name}: its own schedule sets the iteration cap and its splits the tiers; "
                               "drop --iterations / --max-iterations / --max-skips / --tier / --episodes / --holdout")
        if mode != HEADLESS and driver_options:
            with_driver = ", ".join(n for n, v in discover_variants().items() if v.run_mode == HEADLESS)
            raise VariantError(f"--config and --scripted-models are options of variants with a headless driver "
                               f"({with_driver or 'none installed'})")
        if mode == SKILL:
            raise VariantError(
                f"variant {self.name!r} is model-driven: run it from Claude Code with `/architect:loop {self.name} "
                f"{executor}` (the skill calls architect stage/check/smoke/evaluate/commit); `architect loop` runs "
                f"only {', '.join(offline_variants())} offline")
        return mode

    def proposer(self):
        if self.offline_proposer is None:
            raise VariantError(f"variant {self.name!r} has no offline proposer")
        return load_ref(self.offline_proposer)

    def end_attempt(self, paths) -> None:
        """Run the variant's `attempt_ended` hook, if it has one."""
        if self.attempt_ended is not None:
            load_ref(self.attempt_ended)(paths)

    def drive_headless(self, executor: str, **options) -> HeadlessResult:
        """Run a whole run with the variant's headless driver (options: see `headless_driver`)."""
        if self.headless_driver is None:
            raise VariantError(f"variant {self.name!r} has no headless driver")
        return load_ref(self.headless_driver)(executor, **options)


_discovered: dict[str, VariantSpec] | None = None
_lock = threading.Lock()


def discover_variants() -> dict[str, VariantSpec]:
    """Every installed variant, by name. A broken registration raises: variants are few and in-tree."""
    global _discovered
    with _lock:
        if _discovered is None:
            found, broken = load_specs(ENTRY_POINT_GROUP, VariantSpec)
            if broken:
                name, why = next(iter(broken.items()))
                raise VariantError(f"variant plug-in {name}: {why}")
            _discovered = found
        return dict(_discovered)


def find_variant(name: str) -> VariantSpec:
    variants = discover_variants()
    if name not in variants:
        raise VariantError(f"unknown variant {name!r} (known: {', '.join(sorted(variants)) or 'none'}; "
                           f"a variant registers through an `architect.variants` entry point)")
    return variants[name]


def offline_variants() -> list[str]:
    return sorted(n for n, v in discover_variants().items() if v.run_mode == OFFLINE)


def variant_commands(reserved: set[str] = frozenset()) -> dict[str, str]:
    """Top-level command name -> "module:attr" over every installed variant; a name declared
    twice, or one of the `reserved` (the harness's own commands), is refused naming both."""
    found: dict[str, tuple[str, str]] = {}
    for variant, spec in sorted(discover_variants().items()):
        for command, ref in spec.commands.items():
            if command in reserved:
                raise VariantError(f"variant {variant!r} declares the command {command!r}, which is one of "
                                   "architect's own: rename it in its VariantSpec.commands")
            if command in found:
                raise VariantError(f"variants {found[command][0]!r} and {variant!r} both declare the command "
                                   f"{command!r}: rename one in its VariantSpec.commands")
            found[command] = (variant, ref)
    return {command: ref for command, (_, ref) in found.items()}

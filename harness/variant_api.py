"""The search-variant plug-in contract and discovery (docs/contracts.md).

A variant publishes one `VariantSpec` under the entry-point group
`architect.variants`:

    [project.entry-points."architect.variants"]
    kdloop = "harness.variants.kdloop:VARIANT"

`architect init` accepts only discovered variants; `architect loop` runs any
variant that declares an offline proposer; the Claude Code skill named by
`skill` drives the others.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from harness.entry_points import entry_points
from harness.errors import VariantError

ENTRY_POINT_GROUP = "architect.variants"
FITNESS_RULES = {
    "mean": "mean of the primary metric over the episodes, as a percentage",
    "bootstrap": "mean plus a bootstrap confidence interval of the mean (95 %, median)",
}


@dataclass(frozen=True)
class VariantSpec:
    name: str
    skill: str  # the skill file that drives it, relative to the project root
    fitness: str  # a key of FITNESS_RULES
    max_iterations: int  # the iteration cap after iteration 0 (the study's budget)
    offline_proposer: str | None = None  # "module:attr"(staging, seed, attempt, seen) -> Proposal
    # "module:attr" that runs a whole run headless with its own schedule (`architect loop` delegates to it)
    headless_driver: str | None = None

    def problems(self) -> list[str]:
        out = []
        if self.fitness not in FITNESS_RULES:
            out.append(f"fitness {self.fitness!r} is not one of {', '.join(FITNESS_RULES)}")
        if self.max_iterations < 0:
            out.append("max_iterations must be >= 0")
        return out

    def proposer(self):
        if self.offline_proposer is None:
            raise VariantError(f"variant {self.name!r} has no offline proposer")
        from harness.executor_api import load_ref

        return load_ref(self.offline_proposer)


_discovered: dict[str, VariantSpec] | None = None
_lock = threading.Lock()


def discover_variants() -> dict[str, VariantSpec]:
    """Every installed variant, by name. A broken registration raises: variants are few and in-tree."""
    from harness.executor_api import load_ref

    global _discovered
    with _lock:
        if _discovered is None:
            found = {}
            for name, ref in entry_points(ENTRY_POINT_GROUP):
                spec = load_ref(ref)
                problems = spec.problems() if isinstance(spec, VariantSpec) else ["not a VariantSpec"]
                if isinstance(spec, VariantSpec) and spec.name != name:
                    problems.append(f"entry point {name!r} names a spec called {spec.name!r}")
                if problems:
                    raise VariantError(f"variant plug-in {ref}: " + "; ".join(problems))
                found[name] = spec
            _discovered = found
        return dict(_discovered)


def find_variant(name: str) -> VariantSpec:
    variants = discover_variants()
    if name not in variants:
        raise VariantError(f"unknown variant {name!r} (known: {', '.join(sorted(variants)) or 'none'}; "
                           f"a variant registers through an `architect.variants` entry point)")
    return variants[name]


def offline_variants() -> list[str]:
    return sorted(n for n, v in discover_variants().items() if v.offline_proposer)

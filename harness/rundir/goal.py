"""goal.md: the researcher's steering text, re-read every iteration. Its
optional YAML front matter (schemas/goal_front_matter.schema.json) holds what
may change while the run goes on: `max_iterations` lowers the run's iteration
cap (the manifest's cap stays the most)."""

from __future__ import annotations

from harness.errors import UserError
from harness.fileio import read_text, split_front_matter, write_text_atomic
from harness.rundir.layout import RunPaths
from harness.rundir.records import check_record

TEMPLATE = """---
max_iterations: {cap}  # lower it to stop sooner; {cap}, the run's cap, is the most
---
# Goal

Raise the primary metric ({metric}) of the {executor} executor on the
performance tier ({tier}) by editing the agent's architecture (graph.json and
the other whitelisted candidate files: {whitelist}).

Every iteration is checked statically, smoke-tested, evaluated on the same
episode seeds as its parent, and committed here. Re-read this file every
iteration; edit it to steer the search.
"""


def write(paths: RunPaths, *, cap: int, metric: str, executor: str, tier: str, whitelist: list[str]) -> None:
    write_text_atomic(paths.goal, TEMPLATE.format(cap=cap, metric=metric, executor=executor, tier=tier,
                                                  whitelist=", ".join(whitelist)))


def settings(paths: RunPaths) -> dict:
    """goal.md's front matter ({} without one, or without goal.md)."""
    if not paths.goal.is_file():
        return {}
    meta, _ = split_front_matter(read_text(paths.goal, "goal"), str(paths.goal))
    meta = {} if meta is None else meta
    check_record("goal_front_matter", meta, f"{paths.goal} (front matter)")
    return meta


def iteration_cap(paths: RunPaths, manifest: dict) -> dict:
    """{"cap": the cap in force, "manifest": the run's cap, "goal": goal.md's (None: not set)}."""
    run_cap = manifest["caps"]["max_iterations"]
    try:
        goal_cap = settings(paths).get("max_iterations")
    except UserError as exc:
        raise UserError(f"{exc.message}; fix goal.md (its front matter may hold only max_iterations: N)") from None
    return {"cap": run_cap if goal_cap is None else min(run_cap, goal_cap), "manifest": run_cap, "goal": goal_cap}

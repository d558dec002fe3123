"""goal.md: the researcher's steering text, which the optimizer re-reads every
iteration. Its optional YAML front matter (schemas/goal_front_matter.schema.json)
is the only part the harness reads, before every iteration: `max_iterations`
lowers the run's iteration cap (the manifest's cap stays the most). The template
init writes says all of this in the file itself."""

from __future__ import annotations

from harness.errors import UserError
from harness.fileio import read_text, split_front_matter, write_text_atomic
from harness.rundir.layout import RunPaths
from harness.rundir.records import check_record

TEMPLATE = """---
max_iterations: {cap}
# The front matter (between the two --- lines) is read by the harness before every
# iteration (`architect status`, the loop's stop check). Only `max_iterations: N` may
# stand here: the number of committed iterations after iteration 0 after which the
# run stops. It can only lower the run's cap ({cap}, set at init by --max-iterations
# or the variant's default): a larger N is ignored. Any other key, or an N that is
# not a whole number, is an error: `architect status` and the loop refuse to go on
# until goal.md is fixed. Lines starting with # are comments.
---
# Goal

Raise the primary metric ({metric}) of the {executor} executor on the
performance tier ({tier}) by editing the agent's architecture (graph.json and
the other whitelisted candidate files: {whitelist}).

Every iteration is checked statically, smoke-tested, evaluated on the same
episodes as its parent, and committed to this run.

## How this file is read

- The text below the front matter is for the optimizer: the coding agent
  following `/architect:loop` (or one fresh session per iteration under
  `architect drive`) reads all of it at the start of every iteration and again
  before each proposal, so an edit here steers the next iteration, not the one
  under way. The built-in offline proposers of `architect loop` do not read it.
- The researcher writes here: what the search should favour or avoid, budgets
  of time or cost in words, anything the optimizer should know. Write it under
  "Researcher's notes" below, or rewrite the goal above.
- The harness reads only the front matter: the iteration cap.

## Researcher's notes

(none yet)
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

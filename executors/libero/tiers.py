"""LIBERO tier expansion: `suites` blocks (each task of the named suites, a range of
initial states each) and explicit episodes (each suite's step cap comes from
`budgets.max_steps_per_level`, keyed by suite name: the spec's `level_key`).

Task and initial-state counts are the installed package's: a block asking for more
tasks or initial states than a suite has is an error naming the suite. Without
LIBERO installed the blocks expand from their stated counts (tasks: an integer), so
profiles validate anywhere; the simulator refuses before any rollout then.
"""

from __future__ import annotations

from harness.errors import ExecutorProfileError


def _counts(suite_name: str, task: int) -> tuple[int, int] | None:
    from executors.libero import suites

    try:
        suites.require()
    except suites.LiberoUnavailable:
        return None
    return suites.task_count(suite_name), suites.init_state_count(suite_name, task)


def _block(block: dict) -> list[dict]:
    first, count = int(block["init_state_start"]), int(block["init_states"])
    out = []
    for suite_name in block["suites"]:
        known = _counts(suite_name, 0)
        tasks = int(block["tasks"]) if block["tasks"] != "all" else (known[0] if known else 10)
        if known is not None:
            if tasks > known[0]:
                raise ExecutorProfileError(f"suite {suite_name!r} has {known[0]} tasks, the tier asks for {tasks}")
            if first + count > known[1]:
                raise ExecutorProfileError(f"suite {suite_name!r} has {known[1]} initial states per task, the tier "
                                           f"asks for states {first}..{first + count - 1}")
        out.extend({"suite": suite_name, "task": task, "init_state": state}
                   for task in range(tasks) for state in range(first, first + count))
    return out


def expand_tier(spec: dict) -> list[dict]:
    out = [{"suite": e["suite"], "task": int(e["task"]), "init_state": int(e["init_state"])}
           for e in spec.get("episodes", [])]
    for block in spec.get("suites", []):
        out.extend(_block(block))
    return out

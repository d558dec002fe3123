"""LIBERO tier expansion: `suites` blocks (each task of the named suites, a range of
initial states each) and explicit episodes (each suite's step cap comes from
`budgets.max_steps_per_level`, keyed by suite name: the spec's `level_key`).

Task and initial-state counts are the installed package's: a block asking for more
tasks or initial states than a suite has is an error naming the suite. Without
LIBERO installed the blocks expand from their stated counts (tasks: an integer), so
profiles validate anywhere; the simulator refuses before any rollout then.

Also, for the tier audit, what makes two episodes the same task
(`episode_content`: the task's BDDL problem file and the initial state's
contents, not its index), and fresh episodes for certification reruns of a
deterministic agent (`fresh_episodes`: other initial states of the same tasks).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np

from harness.errors import ExecutorProfileError, UserError


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


@lru_cache(maxsize=None)
def _task(suite_name: str, task: int) -> tuple[bytes, np.ndarray]:
    """(BDDL problem file, initial states) of one task, from the installed package."""
    from executors.libero import suites
    from executors.libero.envs import bddl_path

    try:
        suites.require()
    except suites.LiberoUnavailable as exc:
        raise UserError(str(exc)) from None
    found = suites.suite(suite_name)
    return bddl_path(found.get_task(task)).read_bytes(), np.ascontiguousarray(found.get_task_init_states(task))


def episode_content(episode: dict) -> str:
    """sha256 of the task's BDDL problem and the initial state's values"""
    bddl, states = _task(episode["suite"], int(episode["task"]))
    return hashlib.sha256(bddl + b"\0" + states[int(episode["init_state"])].tobytes()).hexdigest()


def fresh_episodes(episodes: list[dict], draw: int, used: list[dict]) -> list[dict]:
    """other initial states of the same tasks, none that any tier uses (the holdout's included), seeded by the draw"""
    taken: dict[tuple, set[int]] = {}
    for e in used:
        taken.setdefault((e["suite"], int(e["task"])), set()).add(int(e["init_state"]))
    out = [dict(e) for e in episodes]
    rng = np.random.default_rng(draw)
    for suite_name, task in sorted({(e["suite"], int(e["task"])) for e in episodes}):
        positions = [i for i, e in enumerate(episodes) if (e["suite"], int(e["task"])) == (suite_name, task)]
        states = len(_task(suite_name, task)[1])
        pool = [s for s in range(states) if s not in taken.get((suite_name, task), set())]
        if len(pool) < len(positions):
            raise UserError(f"LIBERO {suite_name} task {task}: {len(pool)} of its {states} initial states are unused "
                            f"by every tier, {len(positions)} fresh ones needed")
        for position, pick in zip(positions, rng.choice(len(pool), len(positions), replace=False)):
            out[position].update(init_state=pool[int(pick)],
                                 episode_id=f"{suite_name}:{task}:{pool[int(pick)]}~fresh{draw}")
    return out

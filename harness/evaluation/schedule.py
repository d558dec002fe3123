"""Longest-expected-first order of a tier's episodes, and how close the run came to its bound.

An episode's expected length is the wall time it took when the same executor's tier
was last evaluated, by any candidate of the same kind (episodes of one tier differ by
task, not much by candidate; but a graph that calls a model spends its time on model
calls, one that does not on simulator steps, so each kind keeps its own record, as
does the oracle: `evaluator.durations_key`). Those times are kept as a scheduling hint
next to the result cache, `<cache>/results/durations/<executor>/<key>.json`
(schemas/episode_durations.schema.json).
Handing the longest episodes out first keeps a long one from starting last while the
other workers idle (LPT scheduling). The makespan is compared against its lower bound
max(longest episode, total / slots), slots being the episodes run at once.
"""

from __future__ import annotations

import re
from pathlib import Path

from filelock import FileLock

from harness.fileio import read_json, write_json_atomic

FORMAT = 1
_SAFE = re.compile(r"[^A-Za-z0-9._~-]")


class EpisodeDurations:
    """The recorded wall seconds of one executor's tier, by episode id."""

    def __init__(self, executor: str, tier: str, root: Path | None = None):
        from harness.roots import result_cache_dir

        self.executor, self.tier = executor, tier
        folder = Path(root) if root else result_cache_dir() / "durations"
        self.path = folder / _SAFE.sub("_", executor) / f"{_SAFE.sub('_', tier)}.json"
        self._lock = FileLock(str(self.path) + ".lock", timeout=60)

    def load(self) -> dict[str, float]:
        """The recorded seconds; empty when none are recorded or the file is not a valid one
        (a hint: a damaged file only loses the order, never a result)."""
        from harness.schemas import validate_instance

        if not self.path.is_file():
            return {}
        try:
            data = read_json(self.path, "episode durations")
        except Exception:  # noqa: BLE001 - unreadable hint: schedule in tier order
            return {}
        if validate_instance("episode_durations", data) or [data["executor"], data["tier"]] != [self.executor, self.tier]:
            return {}
        return dict(data["seconds"])

    def record(self, seconds: dict[str, float]) -> None:
        """Merge these episodes' seconds into the file (the latest measurement wins)."""
        if not seconds:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            merged = {**self.load(), **{k: round(float(v), 4) for k, v in seconds.items()}}
            write_json_atomic(self.path, {"format": FORMAT, "executor": self.executor, "tier": self.tier,
                                          "seconds": merged}, indent=None)


def longest_first(tasks: list[dict], expected: dict[str, float]) -> list[dict]:
    """TASKS (each with its `episode`) longest expected first; an episode never measured is
    expected to take the mean of those measured; ties keep the tier's order. Nothing
    measured: the tier's order."""
    known = [expected[t["episode"]["episode_id"]] for t in tasks if t["episode"]["episode_id"] in expected]
    if not known:
        return list(tasks)
    default = sum(known) / len(known)
    return sorted(tasks, key=lambda t: -expected.get(t["episode"]["episode_id"], default))


def makespan_report(spans: list[tuple[float, float]], slots: int, order: str) -> dict | None:
    """How the episodes run fared against the best any order could do. SPANS: (start, end)
    of every episode run, on one clock; SLOTS: episodes run at once; ORDER: how they were
    handed out. The makespan runs from the first episode's start to the last one's end
    (worker start-up is not in it)."""
    if not spans:
        return None
    durations = [end - start for start, end in spans]
    makespan = max(end for _, end in spans) - min(start for start, _ in spans)
    bound = max(max(durations), sum(durations) / max(1, slots))
    return {"order": order, "episodes": len(spans), "slots": slots,
            "episode_seconds_total": round(sum(durations), 4), "longest_episode_seconds": round(max(durations), 4),
            "makespan_seconds": round(makespan, 4), "lower_bound_seconds": round(bound, 4),
            "makespan_over_bound": round(makespan / bound, 4) if bound > 0 else None}

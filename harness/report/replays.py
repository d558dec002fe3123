"""Which episodes the report replays: the viewer (harness.report.viewer) of
an evaluated episode, beside the same episode of another candidate (its
parent in the report)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from harness.errors import UserError
from harness.report.collect import RunData
from harness.report.viewer import Side, replay
from harness.rundir.evidence import Evaluated, find_episode, locate
from harness.rundir.layout import RunPaths


def side(ev: Evaluated, episode: str) -> Side:
    record = find_episode(ev.metrics(), ev.label, episode)
    if not record.get("log"):
        raise UserError(f"{ev.label}: episode {record['episode_id']} has no log")
    return Side(ev.label, ev.eval_dir / record["log"], record)


def iteration_replays(paths: RunPaths, executor: str, number: int, parent: int | None, episodes: list[str],
                      missing_ok: bool = False) -> list[str]:
    """The viewers of EPISODES of a committed iteration, each beside its parent's when it has one
    (with MISSING_OK an episode without a log gets a note instead of an error)."""
    child = locate(paths, number)
    base = locate(paths, parent) if parent is not None else None
    out = []
    for k, episode in enumerate(episodes):
        try:
            mine = side(child, episode)
        except UserError as exc:
            if not missing_ok:
                raise
            out.append(f'<p class="na">{escape(str(exc))}</p>')
            continue
        try:
            theirs = side(base, str(mine.record["episode_id"])) if base is not None else None
        except UserError:  # an episode the parent was not evaluated on
            theirs = None
        out.append(replay(executor, mine, theirs, element_id=f"replay-{number}-{k}"))
    return out


@dataclass
class IterationReplays:
    viewers: list[str] = field(default_factory=list)
    omitted: list[str] = field(default_factory=list)  # gained / lost episodes over the limit


def report_replays(run: RunData, limit: int, requested: list[tuple[int, str]] = ()) -> dict[int, IterationReplays]:
    """Per committed iteration: the viewers of its first LIMIT gained and lost
    episodes against its parent, and of the episodes REQUESTED for it."""
    out: dict[int, IterationReplays] = {}
    asked: dict[int, list[str]] = {}
    for number, episode in requested:
        asked.setdefault(number, []).append(episode)
    known = {it.number for it in run.iterations}
    for number in asked:
        if number not in known:
            raise UserError(f"--episode {number}:…: iteration {number} is not committed in run {run.run_id} "
                            f"(committed: {sorted(known)})")
    paths, executor = RunPaths(run.root), run.manifest["executor"]
    for it in run.iterations:
        changed = []
        if it.versus_parent is not None:
            changed = it.versus_parent["episodes"]["gained"] + it.versus_parent["episodes"]["lost"]
        viewers = iteration_replays(paths, executor, it.number, it.parent, changed[:limit], missing_ok=True)
        extra = [e for e in asked.get(it.number, []) if e not in changed[:limit]]
        viewers += iteration_replays(paths, executor, it.number, it.parent, extra)
        if viewers:
            out[it.number] = IterationReplays(viewers, changed[limit:])
    return out

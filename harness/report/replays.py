"""Which episodes the report replays, and `architect episode … --html`: the
viewer (harness.report.viewer) of an evaluated episode, beside the same
episode of another candidate (the parent by default in the report)."""

from __future__ import annotations

from pathlib import Path

from harness.errors import UserError
from harness.fileio import write_text_atomic
from harness.report.viewer import Side, page, replay
from harness.rundir.evidence import Evaluated, _record, locate
from harness.rundir.layout import RunPaths


def side(ev: Evaluated, episode: str) -> Side:
    record = _record(ev.metrics(), ev.label, episode)
    if not record.get("log"):
        raise UserError(f"{ev.label}: episode {record['episode_id']} has no log")
    return Side(ev.label, ev.eval_dir / record["log"], record)


def iteration_replays(paths: RunPaths, executor: str, number: int, parent: int | None, episodes: list[str]) -> list[str]:
    """The viewers of EPISODES of a committed iteration, each beside its parent's when it has one."""
    child = locate(paths, number)
    base = locate(paths, parent) if parent is not None else None
    out = []
    for k, episode in enumerate(episodes):
        mine = side(child, episode)
        theirs = side(base, str(mine.record["episode_id"])) if base is not None else None
        out.append(replay(executor, mine, theirs, element_id=f"replay-{number}-{k}"))
    return out


def write_episode_html(paths: RunPaths, ref: str, episode: str, vs: str | None, executor: str, output: Path) -> Path:
    """`architect episode RUN ITER EPISODE --html PATH [--vs ITER]`."""
    output = Path(output)
    if output.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"--html {output}: the viewer is an HTML file (name it *.html)")
    child = side(locate(paths, ref), episode)
    parent = side(locate(paths, vs), str(child.record["episode_id"])) if vs is not None else None
    body = replay(executor, child, parent)
    title = f"{paths.run_id} · {child.label} · episode {child.record['episode_id']}"
    try:
        write_text_atomic(output, page(title, body))
    except OSError as exc:
        raise UserError(f"cannot write the viewer to {output}: {exc.strerror or exc}") from None
    return output.resolve()

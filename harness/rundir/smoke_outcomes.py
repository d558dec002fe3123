"""Per-episode outcomes of a staged candidate's smoke run (`architect smoke`),
and what changed against its parent's smoke run on the shared episodes."""

from __future__ import annotations

from pathlib import Path

from harness.fileio import read_json
from harness.rundir.records import read_metrics


def smoke_outcomes(run, folder: Path) -> dict | None:
    """{"episodes": [{episode_id, success, termination}], "vs_parent": {parent, gained, lost} or None};
    None when the smoke run wrote no metrics."""
    metrics = read_metrics(folder / "smoke" / "metrics.json")
    if metrics is None:
        return None
    rows = [{"episode_id": e["episode_id"], "success": e["success"], "termination": e.get("termination")}
            for e in metrics["episodes"]]
    parent = (read_json(folder / "stage.json", "stage record") if (folder / "stage.json").is_file() else {}).get("parent")
    theirs = read_metrics(run.paths.iteration(parent) / "smoke" / "metrics.json") if isinstance(parent, int) else None
    vs = None
    if theirs is not None:
        before = {e["episode_id"]: bool(e["success"]) for e in theirs["episodes"]}
        shared = [r for r in rows if r["episode_id"] in before]
        vs = {"parent": parent, "shared": len(shared),
              "gained": [r["episode_id"] for r in shared if r["success"] and not before[r["episode_id"]]],
              "lost": [r["episode_id"] for r in shared if not r["success"] and before[r["episode_id"]]]}
    return {"episodes": rows, "vs_parent": vs}


def render(outcomes: dict) -> str:
    lines = [f"  {r['episode_id']}: {'success' if r['success'] else 'failure'} ({r['termination']})"
             for r in outcomes["episodes"]]
    vs = outcomes["vs_parent"]
    if vs is not None:
        lines.append(f"  vs parent {vs['parent']} on {vs['shared']} shared episodes: gained "
                     f"{', '.join(vs['gained']) or 'none'}; lost {', '.join(vs['lost']) or 'none'}")
    return "\n".join(lines)

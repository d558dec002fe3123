"""`architect outputs`: what one node put out over a whole evaluation — per port,
the count of each value (numbers: also a summary) over every firing of every
episode, per group (level), with the episodes each value came from; with
`vs`, the same for another iteration beside it. Read from the episode logs."""

from __future__ import annotations

import json
import math
from collections import Counter

from harness.errors import UserError
from harness.rundir.evidence import Evaluated, locate
from harness.rundir.layout import RunPaths

DISTINCT_SHOWN = 20  # numbers with more distinct values get only their summary
VALUES_SHOWN = 10    # the human view's most frequent values per port


def _key(value) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def collect(ev: Evaluated, node: str) -> tuple[dict[str, list[tuple[str, str, object]]], int, set[str]]:
    """({port: [(episode id, group, value) per firing]}, episodes read, nodes seen)."""
    from harness.evaluation.compare import group_reader
    from harness.evaluation.trace import read_log

    metrics = ev.metrics()
    group_of = group_reader(metrics.get("executor"))
    ports: dict[str, list[tuple[str, str, object]]] = {}
    seen: set[str] = set()
    read = 0
    for record in metrics.get("episodes") or []:
        if not record.get("log"):
            continue
        _, firings = read_log(ev.eval_dir / record["log"])
        read += 1
        episode, group = str(record["episode_id"]), group_of(record)
        for firing in firings:
            seen.add(str(firing.get("node")))
            if firing.get("node") != node:
                continue
            for port, value in (firing.get("outputs") or {}).items():
                ports.setdefault(port, []).append((episode, group, value))
    if read == 0:
        raise UserError(f"{ev.label}: no episode logs to read (evaluate with logs kept: `architect evaluate`)")
    return ports, read, seen


def port_summary(rows: list[tuple[str, str, object]]) -> dict:
    """Value counts (with episode ids) overall and per group (`by_group`: value as JSON text ->
    firings); numbers also a summary."""
    values = [v for _, _, v in rows]
    out: dict = {"firings": len(rows), "episodes": len({e for e, _, _ in rows})}
    numbers = [v for v in values if _is_number(v)]
    if numbers and len(numbers) == len(values):
        out["summary"] = {"mean": sum(numbers) / len(numbers), "min": min(numbers), "max": max(numbers),
                          "distinct": len(set(numbers))}
        out["summary_by_group"] = {g: {"firings": len(vs), "mean": sum(vs) / len(vs)}
                                   for g, vs in _by_group(rows).items()}
        if len(set(numbers)) > DISTINCT_SHOWN:
            return out
    counts = Counter(_key(v) for v in values)
    by_key = {_key(v): v for v in values}
    out["values"] = [{"value": by_key[k], "firings": n,
                      "episodes": sorted({e for e, _, v in rows if _key(v) == k})} for k, n in counts.most_common()]
    out["by_group"] = {g: dict(Counter(_key(v) for v in vs).most_common()) for g, vs in _by_group(rows).items()}
    return out


def _by_group(rows) -> dict[str, list]:
    groups: dict[str, list] = {}
    for _, group, value in rows:
        groups.setdefault(group, []).append(value)
    return dict(sorted(groups.items()))


def outputs_view(paths: RunPaths, ref: str | int, node: str, port: str | None = None,
                 vs: str | int | None = None) -> dict:
    """NODE's outputs over REF's evaluation (one PORT or every port); with VS, also over VS's."""
    sides = [locate(paths, ref)] + ([locate(paths, vs)] if vs is not None else [])
    views = []
    for ev in sides:
        ports, read, seen = collect(ev, node)
        if not ports and node not in seen:
            raise UserError(f"{ev.label}: no node {node!r} fired in its {read} episode(s); nodes that fired: "
                            f"{', '.join(sorted(seen))}: give one of them")
        if port is not None and port not in ports:
            raise UserError(f"{ev.label}: node {node!r} has no output port {port!r} in its logs; its ports: "
                            f"{', '.join(sorted(ports)) or 'none'}: pass one with --port")
        chosen = {port: ports[port]} if port is not None else ports
        views.append({"label": ev.label, "episodes_read": read,
                      "ports": {name: port_summary(rows) for name, rows in chosen.items()}})
    out = {"node": node, "port": port, **views[0]}
    if vs is not None:
        out["vs"] = views[1]
    return dict(out, text=render(out))


def render(view: dict) -> str:
    from harness.evaluation.trace import brief

    lines = []
    for side in [view] + ([view["vs"]] if view.get("vs") else []):
        lines.append(f"{side['label']}: node {view['node']} over {side['episodes_read']} episode(s)")
        for name, p in side["ports"].items():
            lines.append(f"  port {name}: {p['firings']} firing(s) in {p['episodes']} episode(s)")
            if "summary" in p:
                s = p["summary"]
                lines.append(f"    mean {s['mean']:.3g}, min {s['min']:.3g}, max {s['max']:.3g}, "
                             f"{s['distinct']} distinct")
            values = p.get("values", [])
            for v in values[:VALUES_SHOWN]:
                shown = ", ".join(v["episodes"][:5]) + (" …" if len(v["episodes"]) > 5 else "")
                lines.append(f"    {brief(v['value'])}: {v['firings']} firing(s), {len(v['episodes'])} episode(s) "
                             f"({shown})")
            if len(values) > VALUES_SHOWN:
                lines.append(f"    … {len(values) - VALUES_SHOWN} more value(s)")
            for group, counts in (p.get("by_group") or {}).items():
                top = list(counts.items())[:3]
                lines.append(f"    {group}: " + ", ".join(f"{brief(json.loads(k), 60)} {n}" for k, n in top)
                             + (f", {len(counts) - 3} more" if len(counts) > 3 else ""))
            for group, g in (p.get("summary_by_group") or {}).items():
                lines.append(f"    {group}: mean {g['mean']:.3g} over {g['firings']} firing(s)")
    lines.append("(values shortened; --json gives them in full with every episode id)")
    return "\n".join(lines)

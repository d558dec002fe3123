"""`architect episodes --metrics`: every episode of one evaluation in one table
(episode id, level, success, termination reason, each metric the executor
declares, with its better direction), per-level aggregates, and with a second
evaluation (`--vs`) both values of each shared episode and each metric's change
in its direction. Plain data; `render` is the human table."""

from __future__ import annotations

import io
import statistics
from collections import Counter

from harness.evaluation.compare import group_reader
from harness.evaluation.failures import reason
from harness.evaluation.paired import pair_by_episode
from harness.evaluation.records import SUCCESS_NAMES, metric_value


def declared_metrics(executor: str | None) -> list[dict]:
    """The executor spec's metrics other than success itself, in declared order, with their direction."""
    from harness.executor_api import discover_executors

    spec = discover_executors().get(executor) if executor else None
    return [{"name": name, "direction": direction} for name, direction in (spec.metrics if spec else {}).items()
            if name not in SUCCESS_NAMES]


def _side(record: dict, names: list[str]) -> dict:
    return {"success": bool(record.get("success")), "termination": reason(record),
            "metrics": {name: metric_value(record, name) for name in names}}


def _change(a, b, direction: str) -> str | None:
    """`b` against `a` in the metric's better direction: better, worse or same (None: a value is missing)."""
    if a is None or b is None:
        return None
    if a == b:
        return "same"
    return "better" if (b > a) == (direction == "higher") else "worse"


def _aggregate(sides: list[dict], names: list[str]) -> dict:
    successes = sum(s["success"] for s in sides)
    means = {}
    for name in names:
        values = [s["metrics"][name] for s in sides if s["metrics"][name] is not None]
        means[name] = statistics.fmean(values) if values else None
    return {"episodes": len(sides), "successes": successes,
            "success_rate": successes / len(sides) if sides else None,
            "terminations": dict(Counter(s["termination"] for s in sides).most_common()), "means": means}


def metrics_table(metrics: dict, label: str, base: dict | None = None, base_label: str | None = None) -> dict:
    """The table of `metrics` (one metrics.json); with `base`, on the episodes both scored, each
    row and aggregate with the base's values beside and each metric's change (`better`/`worse`/
    `same` in its declared direction; none for a metric without one)."""
    columns = declared_metrics(metrics.get("executor"))
    names = [c["name"] for c in columns]
    direction = {c["name"]: c["direction"] for c in columns}
    records = metrics.get("episodes") or []
    group_of = group_reader(metrics.get("executor"))  # the groups `episodes` reports under
    pairs = pair_by_episode(base.get("episodes") or [], records) if base is not None else [(None, r) for r in records]
    rows = []
    for ra, rb in pairs:
        row = {"episode_id": str(rb["episode_id"]), "level": group_of(rb), **_side(rb, names)}
        if ra is not None:
            row["vs"] = _side(ra, names)
            row["change"] = {n: _change(row["vs"]["metrics"][n], row["metrics"][n], direction[n]) for n in names}
            row["outcome"] = ("unchanged" if ra["success"] == rb["success"] else "gained" if rb["success"] else "lost")
        rows.append(row)

    def aggregate(selected: list[dict]) -> dict:
        out = _aggregate(selected, names)
        if base is not None:
            out["vs"] = _aggregate([r["vs"] for r in selected], names)
            out["change"] = {n: _change(out["vs"]["means"][n], out["means"][n], direction[n]) for n in names}
        return out

    levels = {level: aggregate([r for r in rows if r["level"] == level])
              for level in sorted({r["level"] for r in rows})}
    primary = (metrics.get("primary") or {}).get("metric")
    column = "success" if primary is None or primary in SUCCESS_NAMES else f"metrics.{primary}"
    table = {"label": label, "vs": base_label,
             "primary": {"metric": primary, "column": column,
                         "note": f"the primary metric{f' ({primary})' if primary else ''} is each episode's "
                                 + ("`success` (its mean: `success_rate`)" if column == "success" else f"`{column}`")},
             "metrics": columns, "episodes": rows, "levels": levels, "all": aggregate(rows)}
    if base is not None:
        table["only_vs"] = len({str(r["episode_id"]) for r in base.get("episodes") or []}
                               - {r["episode_id"] for r in rows})
        table["only_this"] = len(records) - len(rows)
    return table


MARK = {"better": " ↑", "worse": " ↓", "same": "", None: ""}


def _number(value) -> str:
    if value is None:
        return "–"
    return f"{value:.4g}" if isinstance(value, float) and not value.is_integer() else f"{value:g}"


def _text(grid) -> str:
    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=100_000, no_color=True, highlight=False).print(grid)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


def render(table: dict) -> str:
    """The table as text, then the per-level aggregates and a legend."""
    from rich import box
    from rich.table import Table

    names = [c["name"] for c in table["metrics"]]
    heads = [f"{c['name']} ({c['direction']})" for c in table["metrics"]]
    compared = table["vs"] is not None

    def both(entry: dict, show) -> str:
        """`show` of the entry, as `vs→this` when compared."""
        return f"{show(entry['vs'])}→{show(entry)}" if compared else show(entry)

    def values(entry: dict, key: str) -> list[str]:
        if not compared:
            return [_number(entry[key][n]) for n in names]
        return [f"{_number(entry['vs'][key][n])}→{_number(entry[key][n])}{MARK[entry['change'][n]]}" for n in names]

    def grid(title: str, first: list[str], rows: list[list[str]]) -> str:
        out = Table(*first, *heads, title=title, box=box.SIMPLE_HEAD, title_justify="left")
        for row in rows:
            out.add_row(*row)
        return _text(out)

    title = f"{table['label']}" + (f" (vs {table['vs']}, shared episodes)" if compared else "") + ": every episode"
    episodes = grid(title, ["episode", "level", "success", "termination"],
                    [[r["episode_id"], r["level"], both(r, lambda e: "yes" if e["success"] else "no"),
                      both(r, lambda e: e["termination"]), *values(r, "metrics")] for r in table["episodes"]])
    aggregates = grid("per level: successes, terminations, metric means", ["level", "successes", "terminations"],
                      [[name, both(agg, lambda a: f"{a['successes']}/{a['episodes']}"),
                        both(agg, lambda a: ", ".join(f"{k} {v}" for k, v in a["terminations"].items())),
                        *values(agg, "means")]
                       for name, agg in [*table["levels"].items(), ("all", table["all"])]])
    legend = "(each metric headed with the better direction the executor declares"
    if compared:
        legend += f"; A→B is {table['vs']}→{table['label']}, ↑ better, ↓ worse in that direction"
        if table.get("only_vs") or table.get("only_this"):
            legend += f"; not shared: {table['only_vs']} of {table['vs']}'s, {table['only_this']} of {table['label']}'s"
    return "\n".join([episodes, aggregates, legend + "; – no value)"])

"""Human-readable views of a run: the ledger table and one-line progress."""

from __future__ import annotations

from rich.table import Table

from harness.rundir import ledger


def score_text(primary: dict | None) -> str:
    if not primary or primary.get("mean") is None:
        return "-"
    text = f"{primary['mean']:.3f}"
    if primary.get("ci_low") is not None and primary.get("ci_high") is not None:
        text += f" [{primary['ci_low']:.2f}, {primary['ci_high']:.2f}]"
        if primary.get("ci_method"):
            text += f" {primary['ci_method']}"
    return text


def ledger_table(rows: list[dict], title: str | None = None) -> Table:
    table = Table(title=title, show_lines=False)
    for name, justify in (("#", "right"), ("iter", "right"), ("parent", "right"), ("status", "left"),
                          ("smoke", "left"), ("primary [95% CI]", "right"), ("cost $", "right"),
                          ("wall s", "right"), ("axes", "left"), ("description / reason", "left")):
        table.add_column(name, justify=justify, overflow="fold")
    best = ledger.best_row(rows)
    for row in rows:
        smoke = row.get("smoke")
        status = row["status"] + (" *best*" if best is not None and row is best else "")
        text = row.get("description") or ""
        if row["status"] == "discarded":
            text = f"{text} — {row.get('reason')}" if text else str(row.get("reason"))
        table.add_row(
            str(row["attempt"]), str(row["iteration"]) if row["status"] == "committed" else f"({row['iteration']})",
            "-" if row.get("parent") is None else str(row["parent"]), status,
            "-" if smoke is None else ("pass" if smoke["passed"] else "FAIL"),
            score_text(row.get("primary")),
            "-" if row.get("cost_usd") is None else f"{row['cost_usd']:.4f}",
            ("-" if row.get("wall_seconds") is None else f"{row['wall_seconds']:.1f}")
            + (f" ({row['cached_episodes']} cached)" if row.get("cached_episodes") else ""),
            ", ".join(row.get("axes") or []) or "-", text,
        )
    return table

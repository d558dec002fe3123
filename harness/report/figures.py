"""The report's figures (matplotlib, Agg): score trajectory with CIs, parent
lineage and best-so-far line; intervention-axis shares. Inline SVG for the
page, PNG and SVG files for papers."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - after choosing the backend

from harness.report.collect import RunData  # noqa: E402
from harness.rundir import ledger  # noqa: E402

COLORS = plt.get_cmap("tab10").colors


def trajectory(runs: list[RunData]):
    """Primary mean per committed iteration (95 % CI bars), a grey segment from
    each iteration to its parent (the lineage tree), and the best-so-far line."""
    fig, ax = plt.subplots(figsize=(8, 4.2), dpi=110)
    for k, run in enumerate(runs):
        color = COLORS[k % len(COLORS)]
        by_number = {it.number: it for it in run.iterations}
        for it in run.iterations:
            parent = by_number.get(it.parent) if it.parent is not None else None
            if parent is not None and it.mean is not None and parent.mean is not None:
                ax.plot([parent.number, it.number], [parent.mean, it.mean], color="0.7", lw=0.9, zorder=1)
        points = [it for it in run.iterations if it.mean is not None]
        xs = [it.number for it in points]
        ys = [it.mean for it in points]
        low = [max(0.0, it.mean - _ci(it, "ci_low", it.mean)) for it in points]  # rounded bounds may cross
        high = [max(0.0, _ci(it, "ci_high", it.mean) - it.mean) for it in points]
        ax.errorbar(xs, ys, yerr=[low, high], fmt="o", ms=5, color=color, ecolor=color, alpha=0.85, capsize=3,
                    zorder=3, label=f"{run.label}: iterations (95% CI)")
        best = run.best_so_far()
        if best:
            ax.step([b[0] for b in best], [b[1] for b in best], where="post", color=color, lw=2, zorder=2,
                    label=f"{run.label}: best so far")
    metric = runs[0].manifest["profiles"]["primary_metric"] if runs else "score"
    ax.set_xlabel("iteration")
    ax.set_ylabel(metric)
    ax.set_title("score trajectory (grey: child ← parent)")
    ax.grid(alpha=0.3)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


def axis_shares(runs: list[RunData]):
    """Share of tagged iterations touching each intervention axis, per run."""
    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=110)
    per_run = [ledger.axis_counts(run.rows) for run in runs]
    axes = sorted({axis for counts, _ in per_run for axis in counts})
    if not axes:
        ax.text(0.5, 0.5, "no committed iteration is tagged with an axis", ha="center", va="center")
        ax.set_axis_off()
        fig.tight_layout()
        return fig
    width = 0.8 / max(1, len(runs))
    for k, (run, (counts, tagged)) in enumerate(zip(runs, per_run)):
        shares = [counts.get(axis, 0) / tagged if tagged else 0 for axis in axes]
        ax.bar([i + k * width for i in range(len(axes))], shares, width=width, color=COLORS[k % len(COLORS)],
               label=run.label)
    ax.set_xticks([i + width * (len(runs) - 1) / 2 for i in range(len(axes))], axes, rotation=20, ha="right")
    ax.set_ylabel("share of tagged iterations")
    ax.set_ylim(0, 1)
    ax.set_title("intervention axes")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def svg_text(fig) -> str:
    """The figure as an inline <svg> element."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def export(fig, folder: Path, name: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for ext in ("png", "svg"):
        path = folder / f"{name}.{ext}"
        fig.savefig(path, format=ext)
        written.append(path)
    return written


def close(fig) -> None:
    plt.close(fig)


def _ci(it, key: str, default: float) -> float:
    value = (it.row.get("primary") or {}).get(key)
    return default if value is None else value

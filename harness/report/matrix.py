"""`architect report --matrix RUN…`: runs laid out as the study's table, rows
= variants, columns = executors; one cell per run (a cell holds every run of
its variant on its executor), linking to that run's own report. The same
figures as CSV (one row per run) and as a LaTeX table.

Each figure comes from the run's records: the ledger (seed and best primary
mean with its CI, iterations committed / discarded, axes, cost, wall time),
certification.json once certified (reruns mean ± sd and Δ, the paired verdict
of the best against iteration 0 on the search tier, the holdout verdict).
Leak flags count the attempts the check discarded for a privileged leak."""

from __future__ import annotations

import csv
import io
from html import escape

from harness.report.collect import RunData
from harness.rundir import ledger

LEAK_CODES = ("privileged_leak", "privileged_to_candidate")
COLUMNS = ("run_id", "variant", "executor", "metric", "seed_sr", "best_iteration", "best_sr", "best_ci_low",
           "best_ci_high", "rerun_seed_mean", "rerun_seed_sd", "rerun_best_mean", "rerun_best_sd", "rerun_delta",
           "paired_verdict", "holdout_verdict", "holdout_delta", "leak_flags", "committed", "discarded",
           "top_axis", "top_axis_share", "cost_usd", "wall_seconds", "report")


def cell(run: RunData, report: str) -> dict:
    """The matrix's figures of one run (a CSV row: COLUMNS; None where the run has no such record yet)."""
    rows = run.rows
    seed = next((r for r in ledger.committed(rows) if r["iteration"] == 0), None)
    best = run.best
    primary = (best or {}).get("primary") or {}
    record = run.certification
    reruns = (record or {}).get("reruns") or {}
    holdout = (record or {}).get("holdout") or {}
    selection = ((record or {}).get("selection") or {}).get("vs_baseline") or {}
    share = ledger.axis_share(rows)
    return {
        "run_id": run.run_id, "variant": run.manifest["variant"], "executor": run.manifest["executor"],
        "metric": run.manifest["profiles"]["primary_metric"],
        "seed_sr": ((seed or {}).get("primary") or {}).get("mean"),
        "best_iteration": best["iteration"] if best else None, "best_sr": primary.get("mean"),
        "best_ci_low": primary.get("ci_low"), "best_ci_high": primary.get("ci_high"),
        "rerun_seed_mean": (reruns.get("baseline") or {}).get("mean"),
        "rerun_seed_sd": (reruns.get("baseline") or {}).get("sd"),
        "rerun_best_mean": (reruns.get("best") or {}).get("mean"),
        "rerun_best_sd": (reruns.get("best") or {}).get("sd"),
        "rerun_delta": reruns.get("delta"),
        "paired_verdict": selection.get("verdict") if record else None,
        "holdout_verdict": holdout.get("verdict"), "holdout_delta": holdout.get("delta"),
        "leak_flags": sum(1 for r in rows if any(code in str(r.get("reason") or "") for code in LEAK_CODES)),
        "committed": sum(1 for r in ledger.committed(rows) if r["iteration"] != 0),
        "discarded": sum(1 for r in rows if r["status"] == "discarded"),
        "top_axis": share["axis"] if share else None, "top_axis_share": share["share"] if share else None,
        "cost_usd": round(sum(r.get("cost_usd") or 0 for r in rows), 6),
        "wall_seconds": round(sum(r.get("wall_seconds") or 0 for r in rows), 3),
        "report": report,
    }


def layout(cells: list[dict]) -> tuple[list[str], list[str], dict[tuple[str, str], list[dict]]]:
    """(variants, executors, (variant, executor) -> its runs' cells)."""
    variants = sorted({c["variant"] for c in cells})
    executors = sorted({c["executor"] for c in cells})
    grid: dict[tuple[str, str], list[dict]] = {}
    for c in cells:
        grid.setdefault((c["variant"], c["executor"]), []).append(c)
    return variants, executors, grid


def _f(value, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def lines(c: dict) -> list[str]:
    """A cell's figures as short lines (the page's and the LaTeX table's)."""
    certified = c["rerun_best_mean"] is not None
    return [
        f"seed {c['metric']} {_f(c['seed_sr'])}",
        f"best {_f(c['best_sr'])} [{_f(c['best_ci_low'], '.2f')}, {_f(c['best_ci_high'], '.2f')}] "
        f"(iteration {_f(c['best_iteration'], 'd')})",
        (f"reruns {_f(c['rerun_seed_mean'])} ± {_f(c['rerun_seed_sd'])} → {_f(c['rerun_best_mean'])} ± "
         f"{_f(c['rerun_best_sd'])}, Δ {_f(c['rerun_delta'], '+.3f')}, paired: {c['paired_verdict'] or '- (best is the seed)'}"
         if certified else "reruns: not certified"),
        f"holdout: {c['holdout_verdict'] or '-'}" + (f" (Δ {_f(c['holdout_delta'], '+.3f')})"
                                                     if c["holdout_delta"] is not None else ""),
        f"leak flags {c['leak_flags']} · iterations {c['committed']} committed / {c['discarded']} discarded",
        f"most-used axis {c['top_axis'] or '-'}" + (f" ({c['top_axis_share']:.0%})" if c["top_axis"] else ""),
        f"cost ${c['cost_usd']:.4f} · wall {c['wall_seconds']:.1f} s",
    ]


def html_table(cells: list[dict]) -> str:
    variants, executors, grid = layout(cells)
    head = "<tr><th>variant \\ executor</th>" + "".join(f"<th>{escape(e)}</th>" for e in executors) + "</tr>"
    body = []
    for v in variants:
        row = [f"<th>{escape(v)}</th>"]
        for e in executors:
            runs = grid.get((v, e), [])
            row.append('<td class="cell">' + ("".join(
                f'<div class="run" data-run="{escape(c["run_id"])}"><a href="{escape(c["report"])}">'
                f'{escape(c["run_id"])}</a><br>' + "<br>".join(escape(line) for line in lines(c)) + "</div>"
                for c in runs) or '<span class="na">no run</span>') + "</td>")
        body.append("<tr>" + "".join(row) + "</tr>")
    return f'<table id="matrix">{head}{"".join(body)}</table>'


def csv_text(cells: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for c in cells:
        writer.writerow({k: "" if c[k] is None else c[k] for k in COLUMNS})
    return out.getvalue()


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "±": r"$\pm$", "Δ": r"$\Delta$",
          "→": r"$\to$", "·": r"$\cdot$"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


def latex_table(cells: list[dict]) -> str:
    variants, executors, grid = layout(cells)
    out = [r"\begin{tabular}{l" + "l" * len(executors) + "}", r"\hline",
           " & ".join(["variant"] + [latex_escape(e) for e in executors]) + r" \\", r"\hline"]
    for v in variants:
        row = [latex_escape(v)]
        for e in executors:
            runs = grid.get((v, e), [])
            row.append(" ".join(r"\begin{tabular}[t]{@{}l@{}}" + r" \\ ".join(latex_escape(x) for x in lines(c))
                                + r"\end{tabular}" for c in runs) or "--")
        out.append(" & ".join(row) + r" \\ \hline")
    out.append(r"\end{tabular}")
    return "\n".join(out) + "\n"

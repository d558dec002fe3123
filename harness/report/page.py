"""The report page: one self-contained HTML file (inline SVG, CSS and JS; no
network needed to view it)."""

from __future__ import annotations

import json
from html import escape

from harness.report import figures, viewer
from harness.report.collect import Iteration, RunData
from harness.report.replays import IterationReplays
from harness.rundir import ledger
from harness.rundir.display import score_text

NOT_AVAILABLE = '<p class="na">not available for this run</p>'

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1100px;padding:1.5em;color:#1d1d1f}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border-bottom:1px solid #e5e5e5;padding:.3em .5em;text-align:left;vertical-align:top}
th{background:#f6f6f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.discarded td{color:#888}tr.best td{background:#eef8ee}
.meta{color:#555}.na{color:#999;font-style:italic}
pre{background:#f8f8f8;border:1px solid #e5e5e5;padding:.6em;overflow:auto;font-size:12px;max-height:32em}
.add{color:#116611;background:#eaffea}.del{color:#aa1111;background:#ffecec}.hunk{color:#6a3d9a}
details{margin:.4em 0}summary{cursor:pointer;font-weight:600}
.figure svg{max-width:100%;height:auto}
button{font:inherit;margin-right:.5em}
"""

SCRIPT = """
[['expand',true],['collapse',false]].forEach(function(b){var e=document.getElementById(b[0]);if(e)e.addEventListener('click',
  function(){document.querySelectorAll('details').forEach(function(d){d.open=b[1];});});});
"""


def run_page(run: RunData, replays: dict[int, IterationReplays] | None = None,
             refresh: float | None = None) -> tuple[str, dict]:
    """The HTML of one run's report, and its figures (name -> matplotlib figure).
    REPLAYS: the episode viewers per iteration; REFRESH: seconds after which the
    page reloads itself (a report being rewritten by `--watch`)."""
    replays = replays or {}
    figs = {"trajectory": figures.trajectory([run]), "axes": figures.axis_shares([run])}
    body = [
        f"<h1>Run {escape(run.run_id)}</h1>",
        _run_meta(run),
        _summary_table([run]),
        '<h2>Score trajectory</h2>',
        f'<div class="figure" id="trajectory">{figures.svg_text(figs["trajectory"])}</div>',
        '<h2>Intervention axes</h2>',
        f'<div class="figure" id="axes">{figures.svg_text(figs["axes"])}</div>',
        '<h2>Ledger</h2>',
        _ledger_table(run.rows),
        '<h2>Certification</h2>',
        _certification(run),
        '<h2>Iterations</h2>',
        '<p><button id="expand">expand all</button><button id="collapse">collapse all</button></p>',
        *(_iteration(run, it, replays.get(it.number)) for it in run.iterations),
    ]
    return _document(f"architect report: {run.run_id}", body, refresh), figs


def compare_page(runs: list[RunData]) -> tuple[str, dict]:
    """Several runs on one page: a summary row each, overlaid figures, each ledger."""
    figs = {"trajectory": figures.trajectory(runs), "axes": figures.axis_shares(runs)}
    body = [
        f"<h1>Comparison of {len(runs)} runs</h1>",
        _summary_table(runs),
        '<h2>Score trajectories</h2>',
        f'<div class="figure" id="trajectory">{figures.svg_text(figs["trajectory"])}</div>',
        '<h2>Intervention axes</h2>',
        f'<div class="figure" id="axes">{figures.svg_text(figs["axes"])}</div>',
        '<h2>Ledgers</h2>',
        '<p><button id="expand">expand all</button><button id="collapse">collapse all</button></p>',
    ]
    for k, run in enumerate(runs):
        body.append(f"<details{' open' if k == 0 else ''}><summary>{escape(run.label)}</summary>"
                    f"{_run_meta(run)}{_ledger_table(run.rows)}</details>")
    return _document(f"architect report: {len(runs)} runs", body), figs


def episode_page(title: str, viewer_html: str) -> str:
    """A page holding one episode viewer (`architect episode … --html`)."""
    return _document(title, [f"<h1>{escape(title)}</h1>", viewer_html])


def _document(title: str, body: list[str], refresh: float | None = None) -> str:
    reload = f'<meta http-equiv="refresh" content="{refresh:g}">' if refresh else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"{reload}<title>{escape(title)}</title><style>{CSS}{viewer.CSS}</style></head><body>\n"
            + "\n".join(body) + f"\n<script>{SCRIPT}{viewer.SCRIPT}</script>\n</body></html>\n")


def _run_meta(run: RunData) -> str:
    m, st = run.manifest, run.state
    caps = m["caps"]
    return (f'<p class="meta">variant <b>{escape(m["variant"])}</b> on executor <b>{escape(m["executor"])}</b> · '
            f'performance tier {escape(m["profiles"]["performance_tier"])}'
            f'{" (" + str(caps["eval_episodes"]) + " episodes)" if caps.get("eval_episodes") else ""} · '
            f'sealed holdout {escape(str(m["profiles"].get("holdout_tier") or "-"))} · '
            f'created {escape(m["created"])} · status {escape(str(st.get("status")))}'
            f'{" (" + escape(str(st["stop_reason"])) + ")" if st.get("stop_reason") else ""} · {escape(str(run.root))}</p>')


def _summary_table(runs: list[RunData]) -> str:
    head = ("<tr><th>run</th><th>variant</th><th>executor</th><th>iterations</th><th>discarded</th>"
            "<th>best [95% CI]</th><th>best iteration</th><th>most-used axis</th><th>cost $</th><th>wall s</th></tr>")
    rows = []
    for run in runs:
        best = run.best
        share = ledger.axis_share(run.rows)
        cost = sum(r.get("cost_usd") or 0 for r in run.rows)
        wall = sum(r.get("wall_seconds") or 0 for r in run.rows)
        rows.append(
            f"<tr><td>{escape(run.run_id)}</td><td>{escape(run.manifest['variant'])}</td>"
            f"<td>{escape(run.manifest['executor'])}</td><td class=num>{len(run.iterations) - 1}</td>"
            f"<td class=num>{sum(1 for r in run.rows if r['status'] == 'discarded')}</td>"
            f"<td class=num>{escape(score_text(best.get('primary')) if best else '-')}</td>"
            f"<td class=num>{best['iteration'] if best else '-'}</td>"
            f"<td>{escape(_share_text(share))}</td>"
            f"<td class=num>{cost:.4f}</td><td class=num>{wall:.1f}</td></tr>")
    return f'<table id="summary">{head}{"".join(rows)}</table>'


def _ledger_table(rows: list[dict]) -> str:
    best = ledger.best_row(rows)
    head = ("<tr><th>#</th><th>iter</th><th>parent</th><th>status</th><th>smoke</th><th>primary [95% CI]</th>"
            "<th>cost $</th><th>wall s</th><th>axes</th><th>description / reason</th></tr>")
    out = []
    for row in rows:
        cls = row["status"] + (" best" if row is best else "")
        text = row.get("description") or ""
        if row["status"] == "discarded":
            text = f"{text} — {row.get('reason')}" if text else str(row.get("reason"))
        smoke = row.get("smoke")
        out.append(
            f'<tr class="{cls}"><td class=num>{row["attempt"]}</td>'
            f'<td class=num>{row["iteration"] if row["status"] == "committed" else "(" + str(row["iteration"]) + ")"}</td>'
            f'<td class=num>{"-" if row.get("parent") is None else row["parent"]}</td><td>{row["status"]}</td>'
            f'<td>{"-" if smoke is None else ("pass" if smoke["passed"] else "FAIL")}</td>'
            f'<td class=num>{escape(score_text(row.get("primary")))}</td>'
            f'<td class=num>{"-" if row.get("cost_usd") is None else format(row["cost_usd"], ".4f")}</td>'
            f'<td class=num>{"-" if row.get("wall_seconds") is None else format(row["wall_seconds"], ".1f")}</td>'
            f'<td>{escape(", ".join(row.get("axes") or []) or "-")}</td><td>{escape(text)}</td></tr>')
    return f'<table id="ledger">{head}{"".join(out)}</table>'


def _holdout_verdict(h: dict, ci: str) -> str:
    """The verdict beside its own test; where that test is McNemar's (success), the Δ interval
    only describes the size of the change and says so (one interval, one verdict)."""
    if h.get("p_value") is None:
        return f'95% CI {ci}, {escape(h["test"])}: <b>{escape(h["verdict"])}</b>'
    return (f'+{h["gained"]}/−{h["lost"]}, {escape(h["test"])} p={_num(h["p_value"], ".3g")}: '
            f'<b>{escape(h["verdict"])}</b> (Δ 95% CI {ci}, descriptive)')


def _certification(run: RunData) -> str:
    """Reruns recorded by `architect rerun`; the certification verdict (Δ,
    holdout) once the run holds one."""
    reruns = [it for it in run.iterations if it.reruns]
    parts = []
    if reruns:
        parts.append("<table id=\"reruns\"><tr><th>iteration</th><th>draws</th><th>mean ± sd</th></tr>" + "".join(
            f"<tr><td class=num>{it.number}</td><td class=num>{len(it.reruns.get('draws') or [])}</td>"
            f"<td class=num>{_mean_sd(it.reruns)}</td></tr>" for it in reruns) + "</table>")
    else:
        parts.append('<p class="na">reruns: none recorded (architect rerun RUN --iter N)</p>')
    record = run.certification
    if record is None:
        parts.append('<p class="na">certification (Δ vs seed, holdout): not run yet (architect certify RUN)</p>')
        return "\n".join(parts)
    r, h = record["reruns"], record["holdout"]
    ci = " – ".join("-" if v is None else f"{v:+.3f}" for v in h["ci"])
    parts.append(
        '<table id="certification"><tr><th></th><th>baseline (iteration 0)</th>'
        f'<th>best (iteration {record["best"]})</th><th>Δ</th><th>detail</th></tr>'
        f'<tr><td>reruns: {r["times"]}× {escape(r["tier"])} ({escape(r["episode_seeds"])} episode seeds)</td>'
        f'<td class=num>{_mean_sd(r["baseline"])}</td><td class=num>{_mean_sd(r["best"])}</td>'
        f'<td class=num>{r["delta"]:+.3f}</td><td>{"deterministic" if record["deterministic"] else "draws vary"}</td></tr>'
        f'<tr><td>holdout: {escape(h["tier"])}, {h["episodes"]} episodes</td><td class=num>{_num(h["baseline"])}</td>'
        f'<td class=num>{_num(h["best"])}</td><td class=num>{_num(h["delta"], "+.3f")}</td>'
        f'<td>{_holdout_verdict(h, ci)}</td></tr></table>')
    if record.get("note"):
        parts.append(f'<p class="meta">{escape(record["note"])}</p>')
    return "\n".join(parts)


def _iteration(run: RunData, it: Iteration, replays: IterationReplays | None) -> str:
    row = it.row
    title = (f"iteration {it.number} ← {'-' if it.parent is None else it.parent}: "
             f"{score_text(row.get('primary'))} — {row.get('description', '')}")
    patch = json.dumps(it.patch, indent=2) if it.patch is not None else None
    return (f'<details class="iteration" id="iteration-{it.number}"><summary>{escape(title)}</summary>'
            f'<p class="meta">axes: {escape(", ".join(row.get("axes") or []) or "-")} · candidate '
            f'{escape(str(row.get("candidate_hash") or "-")[:12])} · {escape(row.get("time", ""))}</p>'
            f'<h3>Patch against the parent</h3>'
            f'{"<pre>" + escape(patch) + "</pre>" if patch else NOT_AVAILABLE}'
            f'<h3>Text diff against the parent</h3>{_diff_html(it.diff)}'
            f'<h3>Episodes gained / lost against the parent</h3>{_versus_parent(it.versus_parent)}'
            f'{_replays(run, it, replays)}</details>')


def _replays(run: RunData, it: Iteration, replays: IterationReplays | None) -> str:
    if replays is None:
        return ""
    more = ""
    if replays.omitted:
        more = (f'<p class="meta">{len(replays.omitted)} more gained / lost episodes are not replayed here '
                f'(architect report {escape(run.run_id)} --replays N, or architect episode {escape(run.run_id)} '
                f'{it.number} EPISODE --vs {it.parent} --html FILE): {escape(" ".join(replays.omitted))}</p>')
    return "<h3>Replays</h3>" + "".join(replays.viewers) + more


def _versus_parent(result: dict | None) -> str:
    if result is None:
        return NOT_AVAILABLE
    eps = result["episodes"]
    unchanged = len(eps["unchanged_success"]) + len(eps["unchanged_failure"])
    primary = result["metrics"][result["primary_metric"]]
    groups = "".join(f"<tr><td>{escape(name)}</td><td class=num>{g['episodes']}</td><td class=num>+{g['gained']}</td>"
                     f"<td class=num>−{g['lost']}</td><td class=num>{g['success_a']} → {g['success_b']}</td></tr>"
                     for name, g in result["groups"].items())
    return (f'<p>{result["shared"]} shared episodes: <b>+{len(eps["gained"])} gained</b>, '
            f'<b>−{len(eps["lost"])} lost</b>, {unchanged} unchanged · {escape(primary["text"])}</p>'
            '<table><tr><th>group</th><th>episodes</th><th>gained</th><th>lost</th><th>successes parent → this</th></tr>'
            f'{groups}</table><p class="meta">gained: {escape(" ".join(eps["gained"]) or "-")}<br>'
            f'lost: {escape(" ".join(eps["lost"]) or "-")}</p>')


def _num(value, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _diff_html(diff: str) -> str:
    if not diff.strip():
        return '<p class="na">no change (the seed candidate)</p>'
    lines = []
    for line in diff.splitlines():
        cls = ("hunk" if line.startswith("@@") else "add" if line.startswith("+") and not line.startswith("+++")
               else "del" if line.startswith("-") and not line.startswith("---") else None)
        lines.append(f'<span class="{cls}">{escape(line)}</span>' if cls else escape(line))
    return "<pre>" + "\n".join(lines) + "</pre>"


def _share_text(share: dict | None) -> str:
    return f"{share['axis']} ({share['share']:.0%})" if share else "-"


def _mean_sd(record: dict) -> str:
    mean, sd = record.get("mean"), record.get("sd")
    return "-" if mean is None else f"{mean:.4f} ± {sd or 0:.4f}"


def matrix_page(cells: list[dict], refresh: float | None = None) -> str:
    """The study's table: rows = variants, columns = executors, a cell per run linking to its report."""
    from harness.report.matrix import html_table

    body = [f"<h1>Variant × executor matrix of {len(cells)} runs</h1>",
            '<p class="meta">per cell: seed and best primary mean (95% CI) on the search tier, certified reruns '
            '(iteration 0 → best, mean ± sd, Δ) with the paired verdict of the best against iteration 0, the '
            'sealed holdout verdict, leak flags (attempts discarded for a privileged leak), iterations, the '
            'most-used intervention axis and its share, cost and wall time; the run id links to its report.</p>',
            html_table(cells)]
    return _document(f"architect report: matrix of {len(cells)} runs", body, refresh)

"""The optimizer's evidence inside a run: an iteration (or a staged slot)
against its parent on the shared performance-tier episodes, one episode's
trace, and how sure the run's "best" is. Plain data for the CLI and reports.

Only performance-tier evaluations are read here; sealed-tier results
(certification) never are."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harness.errors import UserError
from harness.evaluation.compare import compare_evaluations, render
from harness.evaluation.paired import CONFIDENCE
from harness.fileio import read_json
from harness.rundir import ledger
from harness.rundir.layout import SLOTS_DIR, STAGING_NAME, RunPaths
from harness.rundir.records import read_metrics


@dataclass(frozen=True)
class Evaluated:
    label: str
    folder: Path          # the iteration or staging folder
    parent: int | None

    @property
    def eval_dir(self) -> Path:
        return self.folder / "eval"

    def metrics(self) -> dict:
        path = self.eval_dir / "metrics.json"
        metrics = read_metrics(path)
        if metrics is None:
            raise UserError(f"{path}: missing: {self.label} has no performance evaluation "
                            "(run `architect evaluate` first)")
        return metrics


def locate(paths: RunPaths, ref: str | int) -> Evaluated:
    """ITER is a committed iteration number, a staging folder (its name `4-2` or its path
    `runs/<run>/staging/4`), or a KDLoop slot archived when another slot was committed
    (`slots/4-2`, or its path)."""
    text = str(ref)
    given = Path(text)
    slots = paths.root / SLOTS_DIR
    if text.startswith(f"{SLOTS_DIR}/") and not given.is_absolute():
        given = paths.root / text
    if given.is_dir() and given.resolve().parent == slots.resolve():
        return Evaluated(f"archived slot {given.name}", given.resolve(), _staged_parent(given))
    if given.is_dir() and given.resolve().parent == paths.staging.resolve():
        text = given.resolve().name
    elif text.isdigit():
        n = int(text)
        rows = {r["iteration"]: r for r in ledger.committed(ledger.read_rows(paths.ledger))}
        if n not in rows:
            raise UserError(f"iteration {n}: not committed in run {paths.run_id} (committed: {sorted(rows)})")
        return Evaluated(f"iteration {n}", paths.iteration(n), rows[n].get("parent"))
    name = text
    folder = paths.staging / name
    if not STAGING_NAME.match(name) or not folder.is_dir():
        archived = sorted(p.name for p in slots.iterdir()) if slots.is_dir() else []
        raise UserError(f"{text!r}: neither a committed iteration number, a staging folder nor an archived slot of "
                        f"run {paths.run_id}; give an iteration (`architect log {paths.run_id}`), a folder under "
                        f"{paths.staging}" + (f" or slots/NAME (archived: {', '.join(archived)})" if archived else ""))
    return Evaluated(f"staging {name}", folder, _staged_parent(folder))


def _staged_parent(folder: Path) -> int | None:
    try:
        return read_json(folder / "stage.json").get("parent")
    except (OSError, ValueError):
        return None


def _baseline(paths: RunPaths, child: Evaluated, vs: str | int | None) -> Evaluated | None:
    if vs is not None:
        return locate(paths, vs)
    return None if child.parent is None else locate(paths, child.parent)


def episodes_view(paths: RunPaths, ref: str | int, vs: str | int | None = None,
                  confidence: float = CONFIDENCE, failures: bool = True, per_episode: bool = False) -> dict:
    """REF's evaluation: against its parent (or VS) the gained / lost / unchanged
    episodes and the paired tests; with `failures`, its failed episodes per level
    (termination reason, first failing firing) and their summary as a finding,
    besides the profile's probe findings (`log_gap`). An iteration without a
    parent (iteration 0) gets only the failures. With `per_episode`, also every
    episode's metrics in one table with per-level aggregates (`metrics_table`),
    beside the parent's (or VS's) values when there is one."""
    from harness.evaluation import failures as F

    child = locate(paths, ref)
    base = _baseline(paths, child, vs)
    metrics = child.metrics()
    findings = list(metrics.get("findings") or [])  # accounting reconciliation (executor profile probes)
    view = {"a": base.label if base else None, "b": child.label}
    if base is not None:
        result = compare_evaluations(base.metrics(), metrics, confidence=confidence)
        view.update(result)
        text = render(result, base.label, child.label)
    else:
        text = f"{child.label} has no parent to compare with (give --vs ITER for a comparison); its failures:"
    if failures:
        failed = F.failed_episodes(metrics, child.eval_dir)
        findings.insert(0, F.finding(F.summary(metrics, failed)))
        view["failures"] = failed
        text += "\n" + F.render(failed)
    text += "".join(f"\nfinding ({f['kind']}): {f['message']}" for f in findings)
    if per_episode:
        from harness.rundir import metrics_table

        view["per_episode"] = metrics_table.metrics_table(metrics, child.label, base.metrics() if base else None,
                                                          base.label if base else None)
        text += "\n\n" + metrics_table.render(view["per_episode"])
    return dict(view, findings=findings, text=text)


def find_episode(metrics: dict, label: str, episode: str) -> dict:
    """The record of EPISODE (its id, or a prefix only it has) in LABEL's metrics."""
    records = metrics.get("episodes") or []
    exact = [r for r in records if str(r["episode_id"]) == episode]
    if not exact:
        exact = [r for r in records if str(r["episode_id"]).startswith(episode)]
    if len(exact) != 1:
        hint = "matches several" if exact else "matches none"
        raise UserError(f"episode {episode!r} {hint} of the episodes of {label} "
                        f"(e.g. {records[0]['episode_id'] if records else 'none'})")
    return exact[0]


def _log(ev: Evaluated, record: dict):
    from harness.evaluation.trace import read_log

    if not record.get("log"):
        raise UserError(f"{ev.label}: episode {record['episode_id']} has no log")
    return read_log(ev.eval_dir / record["log"])


def episode_view(paths: RunPaths, ref: str | int, episode: str, tick: int | None = None,
                 vs: str | int | None = None, executor: str | None = None,
                 tick_range: tuple[int | None, int | None] | None = None, nodes: tuple[str, ...] = (),
                 arrays: str = "full", max_bytes: int | None = None) -> dict:
    """One episode's trace (or one tick of it, with the executor's rendered
    state; or the ticks of `tick_range`, both ends included; or only the firings
    of `nodes`, see `narrow_ticks`); with VS, where the two traces diverge.
    `ticks_total` and `size` say what the narrowing left out. `arrays="shape"`
    leaves each array's bytes out of the shown ticks (dtype and shape stay).
    Shown ticks whose JSON passes `max_bytes` are refused with a UserError
    giving their size with the arrays' bytes left out and the ticks there are."""
    from harness.evaluation.trace import actions_by_tick, array_shapes, divergence, replay_view, simulator_nodes, ticks

    child = locate(paths, ref)
    record = find_episode(child.metrics(), child.label, episode)
    header, firings = _log(child, record)
    every = ticks(firings, tick, header.get("ports"))
    shown = narrow_ticks(every, firings, tick_range, nodes)
    if arrays == "shape":
        shown = array_shapes(shown)
    sims = simulator_nodes(firings)
    out = {"label": child.label, "episode_id": record["episode_id"], "success": record["success"],
           "termination": record["termination"], "steps": record["steps"],
           "episode": header.get("episode")}  # (the episode as run: level, seed, its caps max_steps, wall_seconds)
    if tick is not None and executor:  # (before the ticks: the rendering is short, their values are whole)
        from harness.canvas.graph import read_json_file

        candidate = child.folder / "candidate"
        out["view"] = replay_view(read_json_file(candidate / "graph.json"), candidate, header["episode"], tick,
                                  actions_by_tick(firings), executor)
    size = len(json.dumps(shown, default=str))
    if max_bytes and size > max_bytes:
        raise UserError(_too_large(record["episode_id"], child.label, shown, firings, size, max_bytes, arrays))
    out.update({"ticks": shown, "ticks_total": len({f["tick"] for f in firings}),
                "size": {"ticks": len(shown), "firings": sum(len(t["nodes"]) for t in shown),
                         "firings_total": sum(1 for f in firings if f["node"] not in sims),
                         "bytes": size, "bytes_unfiltered": len(json.dumps(every, default=str))}})
    if vs is not None:
        base = locate(paths, vs)
        base_record = find_episode(base.metrics(), base.label, str(record["episode_id"]))
        _, base_firings = _log(base, base_record)
        out["vs"] = {"label": base.label, "success": base_record["success"],
                     "divergence": divergence(base_firings, firings)}
    return out


def _too_large(episode_id: str, label: str, shown: list[dict], firings: list[dict], size: int, max_bytes: int,
               arrays: str) -> str:
    """The refusal of a trace larger than `max_bytes`: what would make it smaller."""
    from harness.evaluation.trace import array_shapes, simulator_nodes

    ways = []
    if arrays == "full":
        shapes = len(json.dumps(array_shapes(shown), default=str))
        if shapes < size:
            ways.append(f"--arrays shape ({shapes:,} bytes: the arrays' bytes left out)")
    last = max((f["tick"] for f in firings), default=0)
    per_tick = size // max(len(shown), 1)
    fit = max_bytes // max(per_tick, 1)
    fits = "not one tick fits, so add --node" if fit == 0 else f"about {fit:,} tick{'s' * (fit > 1)} fit{'s' * (fit == 1)}"
    ways += [f"--ticks A:B (it has ticks 0..{last}, about {per_tick:,} bytes each: {fits})",
             "--node NAME, repeatable (bytes of each one's outputs over these ticks: "
             + ", ".join(f"{name} {n:,}" for name, n in _bytes_by_node(shown, simulator_nodes(firings)))
             + "; the observation comes only with a simulator node)"]
    return (f"the trace of {episode_id} ({label}) is {size:,} bytes, over --max-bytes {max_bytes:,}: narrow it with "
            + "; ".join(ways) + "; or give --max-bytes 0 for no limit")


def _bytes_by_node(shown: list[dict], sims: set[str]) -> list[tuple[str, int]]:
    """Each node's share of the shown ticks' JSON, largest first: a simulator node's is the
    observation (its outputs) and the actions."""
    sizes: dict[str, int] = dict.fromkeys(sorted(sims), 0)
    for tick in shown:
        simulated = len(json.dumps([tick.get("observation"), tick.get("actions")], default=str)) if sims else 0
        for sim in sims:
            sizes[sim] += simulated
        for node in tick["nodes"]:
            sizes[node["node"]] = sizes.get(node["node"], 0) + len(json.dumps(node, default=str))
    return sorted(sizes.items(), key=lambda item: -item[1])


def narrow_ticks(every: list[dict], firings: list[dict], tick_range: tuple[int | None, int | None] | None,
                 nodes: tuple[str, ...]) -> list[dict]:
    """The ticks from A to B (both included; an open end reaches the first or last tick) and,
    given `nodes`, in each tick only those nodes' firings; the observation (the simulator's
    outputs) only when a simulator node is named, the current motion only when its node is.
    Values stay whole. Unknown ticks or nodes: a UserError naming what exists."""
    from harness.evaluation.trace import simulator_nodes

    last = max((f["tick"] for f in firings), default=-1)
    if tick_range is not None:
        low, high = (0 if tick_range[0] is None else tick_range[0]), (last if tick_range[1] is None else tick_range[1])
        if low > high or low > last:
            raise UserError(f"--ticks {low}:{high}: the episode has ticks 0..{last}")
        every = [t for t in every if low <= t["tick"] <= high]
    if not nodes:
        return every
    known = {f["node"] for f in firings}
    unknown = sorted(set(nodes) - known)
    if unknown:
        raise UserError(f"--node {', '.join(unknown)}: not a node of this episode's graph; its nodes: "
                        f"{', '.join(sorted(known))}")
    sims = simulator_nodes(firings)
    wanted = set(nodes)
    return [dict(t, nodes=[n for n in t["nodes"] if n["node"] in wanted],
                 observation=t["observation"] if sims & wanted else None,
                 motion=t["motion"] if t.get("motion") and t["motion"]["from"].split(".")[0] in wanted else None)
            for t in every]


def render_episode(view: dict) -> str:
    """The human view of `episode_view`: one line per value, each cut at BRIEF_CHARS (said so at the end)."""
    from harness.evaluation.trace import BRIEF_CHARS, brief

    def ports(values) -> str:
        if not isinstance(values, dict):
            return brief(values)
        return "; ".join(f"{port} {brief(value)}" for port, value in values.items()) or "(none)"

    lines = [f"{view['label']} · {view['episode_id']}: {'success' if view['success'] else 'failure'} "
             f"({view['termination']}, {view['steps']} steps)"]
    for t in view["ticks"]:
        lines.append(f"tick {t['tick']}:")
        for port, value in (t["observation"] or {}).items():
            lines.append(f"  observation {port}: {brief(value)}")
        if t.get("motion"):
            m = t["motion"]
            lines.append(f"  current motion ({m['from']}, tick {m['tick']}): {brief(m['value'])}")
        for node in t["nodes"]:
            extra = f" ERROR {node['error']}" if node.get("error") else ""
            lines.append(f"  {node['node']} ({node['type']}): {ports(node['outputs'])}{extra}")
        lines.append(f"  → actions {brief(t['actions'])}")
    if view.get("view"):
        lines += ["", view["view"]["rendered"] or view["view"]["note"]]
        if view["view"]["rendered"] and view["view"]["note"]:
            lines.append(view["view"]["note"])
    if "vs" in view:
        d = view["vs"]["divergence"]
        if d is None:
            lines.append(f"identical to {view['vs']['label']}")
        else:
            lines.append(f"diverges from {view['vs']['label']} at tick {d['tick']}, node {d['node']} "
                         f"(firing {d['firing']}: {d['why']})")
            lines.append(f"  {view['vs']['label']}: {ports(d['parent_outputs'])}")
            lines.append(f"  {view['label']}: {ports(d['child_outputs'])}")
            lines.append(f"  first tick with different actions: {d['first_action_tick']} "
                         f"({brief(d['parent_actions'])} → {brief(d['child_actions'])})")
    lines.append(f"(each value shortened to {BRIEF_CHARS} characters, … marks a cut, floats to 3 decimals; "
                 "--json gives every value in full)")
    return "\n".join(lines)


def best_view(paths: RunPaths, confidence: float = CONFIDENCE, baseline: bool = True) -> dict | None:
    """The run's best iteration (ledger.BEST_RULE), and paired verdicts against
    iteration 0 (unless not BASELINE) and the runner-up by the same rule: a best that is
    indistinguishable from the runner-up is a near-tie and is reported as one."""
    rows = ledger.read_rows(paths.ledger)
    best = ledger.best_row(rows)
    if best is None:
        return None
    out = {"iteration": best["iteration"], "mean": (best.get("primary") or {}).get("mean"),
           "vs_parent": ledger.verdict_of(best), "rule": ledger.BEST_RULE,
           "vs_baseline": None, "runner_up": None, "near_tie": False}

    def verdict(other: int) -> dict | None:
        try:
            view = episodes_view(paths, best["iteration"], vs=other, confidence=confidence, failures=False)
        except UserError:
            return None
        primary = view["metrics"][view["primary_metric"]]
        return {"iteration": other, "verdict": view["verdict"], "delta": primary["delta"],
                "delta_of": f"iteration {best['iteration']} minus iteration {other} (gained, lost: episodes "
                            f"iteration {best['iteration']} won, lost against it)",
                "p_value": primary["p_value"], "ci": [primary["ci_low"], primary["ci_high"]],
                "gained": len(view["episodes"]["gained"]), "lost": len(view["episodes"]["lost"])}

    if baseline and best["iteration"] != 0:
        out["vs_baseline"] = verdict(0)
    others = [r["iteration"] for r in ledger.ranked(rows) if r["iteration"] != best["iteration"]]
    if others:
        out["runner_up"] = verdict(others[0])
        out["near_tie"] = bool(out["runner_up"] and out["runner_up"]["verdict"] == "indistinguishable")
    return out


def best_text(view: dict | None) -> str:
    if not view:
        return "no best yet"
    text = f"best: iteration {view['iteration']}"
    if view["vs_baseline"]:
        b = view["vs_baseline"]
        text += f"; vs iteration 0: {b['verdict']} (+{b['gained']}/−{b['lost']} episodes, p={b['p_value']})"
    if view["runner_up"]:
        r = view["runner_up"]
        against = f"+{r['gained']}/−{r['lost']} episodes against it, p={r['p_value']}"
        text += (f"; a near-tie with iteration {r['iteration']} ({against})"
                 if view["near_tie"] else f"; {r['verdict']} than the runner-up, iteration {r['iteration']} ({against})")
    return text

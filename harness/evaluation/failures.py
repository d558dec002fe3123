"""What went wrong in one evaluation, from its metrics and episode logs: each
failed episode with its termination reason, its kind of failure and first
failing firing, grouped by level, and a summary (kinds and termination reasons
× level, the most frequent last agent firing before a failure) that
`architect episodes` reports as a finding.

An episode's *kind* and *group* are the executor's reading of its metrics
record (`ExecutorSpec.failure_kind`: navigation tells stopping early from
overshooting, EQA a wrong answer from none, by question type); without one,
the kind is the termination reason and the group the level.

An episode's *first failing firing* is the first firing that raised; in an
episode where nothing raised it is the simulator step that ended the episode
(its inputs are the actions that ended it), or none when the episode was cut
by a budget between steps. Its *last agent firing* is the last firing of a
node other than the simulator."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from harness.errors import UserError
from harness.evaluation.compare import episode_group, failure_hook


def last_line(text: str | None) -> str | None:
    """The last non-empty line of an error or traceback (its cause)."""
    lines = [line.strip() for line in str(text or "").splitlines() if line.strip()]
    return lines[-1] if lines else None


def infra_cause(metrics: dict) -> str:
    """How many episodes failed for infrastructure reasons, and the cause of the first
    (the last line of its worker's traceback, or the pool's reason)."""
    failed = [r for r in metrics.get("episodes") or [] if r.get("infra_error")]
    first = f", first {failed[0]['episode_id']}: {last_line(failed[0]['infra_error'])}" if failed else ""
    return f"{len(failed)} infrastructure failure(s){first}"


def reason(record: dict) -> str:
    """The runtime's termination, with the simulator's own end reason when it adds one
    (BabyAI: `sim_done (failure)` for a wrong or premature `done`)."""
    own = (record.get("metrics") or {}).get("termination")
    runtime = record.get("termination") or "unknown"
    return f"{runtime} ({own})" if isinstance(own, str) and own not in (runtime, "running") else runtime


def _firing(f: dict, why: str) -> dict:
    return {"tick": f.get("tick"), "node": f.get("node"), "type": f.get("type"), "why": why}


def trace_points(firings: list[dict], termination: str) -> tuple[dict | None, dict | None]:
    """(first failing firing, last agent firing) of one episode's firings."""
    from harness.evaluation.trace import simulator_nodes

    simulators = simulator_nodes(firings)
    first = next((_firing(f, f"raised: {last_line(f['error'])}") for f in firings if f.get("error")), None)
    steps = [f for f in firings if f.get("node") in simulators and f.get("inputs")]
    if first is None and steps and termination in ("sim_done", "success"):
        first = _firing(steps[-1], "its step ended the episode")
    agent = [f for f in firings if f.get("node") not in simulators]
    return first, (_firing(agent[-1], "last agent firing") if agent else None)


def reading(record: dict, hook) -> dict:
    """{group, kind, detail} of one episode record: the executor's reading where it gives one, else
    its level and termination reason; an episode ended by an error keeps the reason as its kind."""
    default = {"group": episode_group(record), "kind": reason(record), "detail": None}
    if hook is None:
        return default
    own = dict(hook(record) or {})
    if record.get("infra_error") or record.get("error"):
        own.pop("kind", None)
        own.pop("detail", None)
    return dict(default, **{k: v for k, v in own.items() if k in default and v is not None})


def failed_episodes(metrics: dict, eval_dir: Path) -> list[dict]:
    """Every failed episode of an evaluation, in tier order, with its reason, kind and trace points."""
    from harness.evaluation.trace import read_log

    hook = failure_hook(metrics.get("executor"))
    out = []
    for record in metrics.get("episodes") or []:
        if record.get("success"):
            continue
        read = reading(record, hook)
        entry = {"episode_id": str(record["episode_id"]), "level": read["group"], "reason": reason(record),
                 "kind": read["kind"], "detail": read["detail"],
                 "steps": record.get("steps"), "error": last_line(record.get("infra_error") or record.get("error")),
                 "first_failing_firing": None, "last_agent_firing": None}
        if record.get("log"):
            try:
                _, firings = read_log(eval_dir / record["log"])
            except UserError as exc:
                entry["log_problem"] = exc.message
            else:
                entry["first_failing_firing"], entry["last_agent_firing"] = trace_points(firings,
                                                                                         record.get("termination"))
        out.append(entry)
    return out


def summary(metrics: dict, failed: list[dict]) -> dict:
    """Termination reasons × level over the failed episodes, and the most frequent last
    agent firing (node and type) before a failure."""
    hook = failure_hook(metrics.get("executor"))
    totals = Counter(reading(r, hook)["group"] for r in metrics.get("episodes") or [])
    by_level: dict[str, dict] = {}
    for entry in failed:
        level = by_level.setdefault(entry["level"], {"episodes": totals[entry["level"]], "failed": 0,
                                                     "reasons": Counter(), "kinds": Counter()})
        level["failed"] += 1
        level["reasons"][entry["reason"]] += 1
        level["kinds"][entry["kind"]] += 1
    last = Counter((e["last_agent_firing"]["node"], e["last_agent_firing"]["type"])
                   for e in failed if e["last_agent_firing"])
    common = last.most_common(1)
    return {
        "episodes": sum(totals.values()), "failed": len(failed),
        "reasons": dict(Counter(e["reason"] for e in failed).most_common()),
        "kinds": dict(Counter(e["kind"] for e in failed).most_common()),
        "by_level": {name: dict(v, reasons=dict(v["reasons"].most_common()), kinds=dict(v["kinds"].most_common()))
                     for name, v in sorted(by_level.items())},
        "last_agent_firing": ({"node": common[0][0][0], "type": common[0][0][1], "failures": common[0][1]}
                              if common else None),
    }


def finding(summary_: dict) -> dict:
    """The summary as a finding of `architect episodes` (kind `failures`)."""
    per_level = "; ".join(f"{name} {v['failed']}/{v['episodes']} (" + ", ".join(f"{r} {n}" for r, n in v["kinds"].items())
                          + ")" for name, v in summary_["by_level"].items())
    last = summary_["last_agent_firing"]
    common = (f"; most frequent last agent firing before a failure: {last['node']} ({last['type']}) in "
              f"{last['failures']} of {summary_['failed']}") if last else ""
    return {"kind": "failures", "summary": summary_,
            "message": f"{summary_['failed']} of {summary_['episodes']} episodes failed: {per_level or 'none'}{common}"}


def render(failed: list[dict]) -> str:
    """The failed episodes per level, one line each."""
    lines = []
    for level in sorted({e["level"] for e in failed}):
        lines.append(f"{level}:")
        for e in (e for e in failed if e["level"] == level):
            first = e["first_failing_firing"]
            where = (f"; first failing firing: tick {first['tick']} {first['node']} ({first['type']}): {first['why']}"
                     if first else "")
            kind = f"{e['kind']} ({e['detail']}), " if e["detail"] else (f"{e['kind']}, " if e["kind"] != e["reason"] else "")
            lines.append(f"  {e['episode_id']}: {kind}{e['reason']}, {e['steps']} steps{where}"
                         + (f"; error: {e['error']}" if e["error"] and not first else ""))
    return "\n".join(lines) or "no failed episodes"

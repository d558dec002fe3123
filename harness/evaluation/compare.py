"""Episode-level comparison of two evaluations (two metrics.json contents) on
their shared episodes: which episodes B gained or lost against A, per group
(level, task group), and a paired test per metric. Plain data, for the CLI,
the skills' helpers and the run report alike."""

from __future__ import annotations

from harness.errors import UserError
from harness.evaluation.paired import CONFIDENCE, compare, pair_by_episode
from harness.evaluation.records import metric_value

# What an episode costs, measured by the harness itself for every executor: less is better.
COSTS = {"wall_seconds": "lower", "cost_usd": "lower", "model_calls": "lower", "input_tokens": "lower",
         "output_tokens": "lower"}


def metric_directions(executor: str | None) -> dict[str, str]:
    """Metric -> "higher" or "lower" (the better direction): the executor spec's
    `metrics`, plus the harness's cost counters. A metric missing here gets no
    verdict; an executor that cannot be found contributes nothing."""
    from harness.executor_api import discover_executors

    spec = discover_executors().get(executor) if executor else None
    return {**COSTS, **(dict(spec.metrics) if spec is not None else {})}


def _higher_is_better(name: str, directions: dict[str, str], primary: str) -> bool | None:
    if name in directions:
        return directions[name] == "higher"
    return True if name == primary else None  # the primary metric is what the search maximises


def episode_group(record: dict) -> str:
    """The group an episode is reported under: its level (BabyAI), else the
    part of its id before ':' (a task group), else 'all'."""
    if record.get("level"):
        return str(record["level"])
    head, sep, _ = str(record.get("episode_id", "")).partition(":")
    return head if sep else "all"


def failure_hook(executor: str | None):
    """The executor's `failure_kind` hook (ExecutorSpec: an episode record's kind and group), or None."""
    from harness.executor_api import find_executor
    from harness.plugins import load_ref

    try:
        ref = find_executor(executor).failure_kind if executor else None
    except UserError:
        return None
    return load_ref(ref) if ref else None


def group_reader(executor: str | None):
    """record -> the group it is reported under: the executor's own (its `failure_kind` hook's
    `group`, e.g. EQA's question type) where it gives one, else `episode_group`."""
    hook = failure_hook(executor)

    def group_of(record: dict) -> str:
        own = (hook(record) or {}).get("group") if hook is not None else None
        return str(own) if own is not None else episode_group(record)

    return group_of


def grouped_by(groups, executor: str | None) -> str:
    """The words for how `groups` (the group names found) were made."""
    names = set(groups)
    if names <= {"all"}:
        return f"one group: executor {executor or '?'} declares no level or group key for its episodes"
    return "the executor's episode group (level, suite, task group or question type)"


def primary_name(metrics: dict) -> str:
    return (metrics.get("primary") or {}).get("metric") or "success_rate"


def compare_evaluations(a: dict, b: dict, *, confidence: float = CONFIDENCE, seed: int = 0,
                        metrics: list[str] | None = None, directions: dict[str, str] | None = None) -> dict:
    """B against A: gained / lost / unchanged episodes (on success), per group,
    and a paired comparison of the primary and each secondary metric, each in
    its better direction (`directions`, default: `metric_directions` of B's
    executor; a metric without one is compared without a verdict)."""
    if directions is None:
        directions = metric_directions(b.get("executor"))
    pairs = pair_by_episode(a.get("episodes") or [], b.get("episodes") or [])
    primary = primary_name(b)
    names = [primary] + [m for m in (metrics if metrics is not None else list((b.get("secondary") or {})))
                         if m != primary]
    outcome = {"gained": [], "lost": [], "unchanged_success": [], "unchanged_failure": []}
    groups: dict[str, dict] = {}
    group_of = group_reader(b.get("executor"))  # the executor's own group (EQA: question type), else episode_group
    for ra, rb in pairs:
        key = _outcome(ra["success"], rb["success"])
        outcome[key].append(str(rb.get("episode_id", "?")))
        g = groups.setdefault(group_of(rb), {"episodes": 0, "gained": 0, "lost": 0, "unchanged": 0,
                                             "success_a": 0, "success_b": 0})
        g["episodes"] += 1
        g[key if key in ("gained", "lost") else "unchanged"] += 1
        g["success_a"] += int(ra["success"])
        g["success_b"] += int(rb["success"])
    comparisons = {}
    for name in names:
        values = [(metric_value(ra, name), metric_value(rb, name)) for ra, rb in pairs]
        values = [(x, y) for x, y in values if x is not None and y is not None]
        comparisons[name] = compare([x for x, _ in values], [y for _, y in values], metric=name,
                                    higher_is_better=_higher_is_better(name, directions, primary), confidence=confidence,
                                    seed=seed).to_dict()
    ids_a = {str(r.get("episode_id", i)) for i, r in enumerate(a.get("episodes") or [])}
    ids_b = {str(r.get("episode_id", i)) for i, r in enumerate(b.get("episodes") or [])}
    return {
        "shared": len(pairs),
        "only_a": len(ids_a - ids_b),
        "only_b": len(ids_b - ids_a),
        "primary_metric": primary,
        "verdict": comparisons[primary]["verdict"],
        "confidence": confidence,
        "episodes": outcome,
        "groups": dict(sorted(groups.items())),
        "grouped_by": grouped_by(groups, b.get("executor")),
        "metrics": comparisons,
    }


def _outcome(a: bool, b: bool) -> str:
    if a == b:
        return "unchanged_success" if a else "unchanged_failure"
    return "gained" if b else "lost"


def render(result: dict, label_a: str, label_b: str) -> str:
    """A readable summary: the verdict line, per group, then the episode lists."""
    eps = result["episodes"]
    lines = [f"{label_b} vs {label_a}: {result['shared']} shared episodes, "
             f"+{len(eps['gained'])} gained / −{len(eps['lost'])} lost / "
             f"{len(eps['unchanged_success']) + len(eps['unchanged_failure'])} unchanged"]
    lines += [f"  {m['text']}" for m in result["metrics"].values()]
    lines.append(f"per group (episodes: gained/lost, success A→B; {result.get('grouped_by') or 'by group'}):")
    for name, g in result["groups"].items():
        lines.append(f"  {name}: {g['episodes']}: +{g['gained']}/−{g['lost']}, {g['success_a']}→{g['success_b']}")
    for key in ("gained", "lost"):
        lines.append(f"{key}: {' '.join(eps[key]) or '-'}")
    return "\n".join(lines)


def verdict_summary(a: dict, b: dict, *, confidence: float = CONFIDENCE) -> dict:
    """The short form for ledgers, fitness and memory rows: B against A on the
    primary metric (verdict, Δ, CI, gained / lost, McNemar p)."""
    result = compare_evaluations(a, b, confidence=confidence, metrics=[])
    primary = result["metrics"][result["primary_metric"]]
    return {"verdict": result["verdict"], "test": primary["test"], "confidence": confidence, "shared": result["shared"],
            "delta": primary["delta"], "ci": [primary["ci_low"], primary["ci_high"]], "ci_role": primary["ci_role"],
            "gained": len(result["episodes"]["gained"]), "lost": len(result["episodes"]["lost"]),
            "p_value": primary["p_value"], "text": primary["text"]}

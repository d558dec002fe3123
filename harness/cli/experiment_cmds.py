"""`architect experiment run`: evaluate a candidate on a tier of fixed episodes."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.backend_options import backend_options, evaluation_setting
from harness.cli.conventions import JSON_OPTION, UserError, emit, handled


def default_out_dir(name: str, candidate_hash: str, tier: str, oracle: bool) -> Path:
    from harness.roots import results_dir

    root = results_dir()
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in (name or "candidate"))
    return root / f"{safe}-{candidate_hash[:12]}" / (f"{tier}-oracle" if oracle else tier)


class EpisodesParam(click.ParamType):
    """--episodes: a count (digits) or an episode list file (anything else)."""

    name = "N|FILE"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, Path)):
            return value
        if str(value).isdigit():
            if int(value) < 1:
                self.fail(f"{value!r} is not a count of at least 1", param, ctx)
            return int(value)
        return Path(value)


@click.group("experiment")
def experiment() -> None:
    """Run experiments on a single candidate (outside any run directory)."""


@experiment.command("run")
@click.argument("candidate", type=click.Path(path_type=Path))
@click.option("--tier", default=None,
              help="Episode tier of the executor's profile: smoke (5 episodes, plus the smoke-gate verdict), "
                   "search (the performance tier) or holdout (sealed; never show it to a proposer), or another "
                   "tier the profile defines (BabyAI: search-hard, holdout-hard, search-noisy). With --episodes "
                   "FILE: the name of the tier the file defines [default: the file's name without suffix].")
@click.option("--episodes", type=EpisodesParam(), default=None, metavar="N|FILE",
              help="N: only N episodes of the tier, taken round-robin over its groups (same episodes every time). "
                   "FILE: the episodes "
                   "listed in FILE instead (.jsonl, one episode object per line, or a .json/.yaml list), each "
                   "checked against the executor's episode schema (schemas/episode_<executor>.schema.json).")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes [default: all cores].")
@click.option("--in-flight", "in_flight", type=click.IntRange(min=1), default=None,
              help="Episodes running at once in total [default: the number of workers; for graphs that call "
                   "a model, the pinned inference profile's concurrency].")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None,
              help="Folder for metrics.json and episodes/*.jsonl "
                   "[default: <results>/<name>-<hash>/<tier>; results = $ARCHITECT_RESULTS_DIR, else "
                   "<runs>/_experiments with runs = $ARCHITECT_RUNS_DIR or ./runs].")
@click.option("--no-cache", is_flag=True, help="Re-run every episode instead of reusing cached results.")
@click.option("--oracle", is_flag=True,
              help="Run the executor's oracle (e.g. the BabyAI bot, which reads the true grid) on the same "
                   "episodes: the ceiling, not a fair agent.")
@backend_options
@JSON_OPTION
@handled
def run(candidate: Path, tier: str, episodes, workers, in_flight, out_dir, no_cache, oracle, backend, ray_address,
        as_json) -> None:
    """Evaluate CANDIDATE on a tier of fixed episodes and write metrics.json.

    CANDIDATE is a graph.json or a candidate folder holding one (plus its
    prompts, skill and nodeset files), or a seed or executor name (its seed). The graph is validated first; episodes
    then run in parallel worker processes with a progress bar on stderr.
    Results: OUT/metrics.json (schema schemas/metrics.schema.json) and one
    JSONL log per episode in OUT/episodes/. A worker that dies or hangs is
    replaced and its episode retried once; if it fails again the evaluation
    is marked incomplete. On the smoke tier the smoke-gate verdict (clean
    exit, >= 1 step per episode, valid metric, complete) and its reasons are
    printed; the exit status is 0 whenever the evaluation itself finished.
    """
    from harness.evaluation import evaluate, smoke_gate
    from harness.evaluation.candidate import load_candidate

    candidate = _candidate_folder(candidate)
    cand = load_candidate(candidate)
    tiers = None
    if isinstance(episodes, Path):
        from harness.episode_lists import check_tier_name, episode_list_tier, tier_name

        tier = tier or tier_name(episodes)
        check_tier_name(tier, "--tier")
        tiers = {tier: episode_list_tier(episodes, cand.executor.spec)}
        episodes = None
    elif tier is None:
        raise UserError("--tier is required (or --episodes FILE, which defines the tier)")
    if out_dir is None:
        out_dir = default_out_dir(cand.graph.get("name") or cand.directory.name, cand.hash, tier, oracle)
    evaluation_setting(backend, ray_address)  # rejects --ray-address without --backend ray
    metrics = evaluate(candidate, tier, episodes=episodes, workers=workers, in_flight=in_flight,
                       out_dir=out_dir, use_cache=not no_cache, progress=True, oracle=oracle,
                       backend=backend, ray_address=ray_address, tiers=tiers)
    gate = smoke_gate(metrics) if tier == "smoke" else None
    summary = summary_of(metrics, Path(out_dir), gate)
    emit(summary, as_json, human=None if as_json else human_summary(summary))


def _candidate_folder(candidate: Path) -> Path:
    """CANDIDATE as given, or, when no such path exists, the folder of the seed (or the
    executor's default seed) it names."""
    if candidate.exists() or len(candidate.parts) != 1:
        return candidate
    from harness.executor_api import resolve_seed

    try:
        spec, seed = resolve_seed(str(candidate))
    except UserError as exc:
        raise UserError(f"{candidate}: no such candidate folder or graph.json, and not a seed name: {exc.message}") from None
    return spec.seed_dir(seed)


def summary_of(metrics: dict, out_dir: Path, gate: dict | None) -> dict:
    keep = ("tier", "executor", "oracle", "candidate", "primary", "secondary", "n", "n_episodes",
            "complete", "infra_failures", "agent_errors", "terminations", "cached", "backend", "workers", "in_flight",
            "wall_seconds", "schedule", "model", "warnings")
    summary = {"ok": True, **{k: metrics[k] for k in keep if k in metrics}}
    if not metrics["complete"]:
        from harness.evaluation.failures import infra_cause

        summary["infra_cause"] = infra_cause(metrics)
    summary["metrics_path"] = str(out_dir / "metrics.json")
    summary["episodes_dir"] = str(out_dir / "episodes")
    if gate is not None:
        summary["smoke_gate"] = gate
    return summary


def _schedule_line(schedule: dict) -> str:
    ratio = schedule["makespan_over_bound"]
    return (f"schedule: {schedule['order'].replace('_', ' ')} · makespan {schedule['makespan_seconds']:.1f} s vs "
            f"bound {schedule['lower_bound_seconds']:.1f} s" + ("" if ratio is None else f" ({ratio:.2f}x)")
            + f" · {schedule['episodes']} episode(s) on {schedule['slots']} slot(s)")


def human_summary(s: dict) -> str:
    p = s["primary"]
    mean = "n/a" if p["mean"] is None else f"{100 * p['mean']:.1f}%" if p["ci_method"] == "wilson" else f"{p['mean']:.4g}"
    ci = "" if not p["ci95"] else (
        f" (95% CI {100 * p['ci95'][0]:.1f}–{100 * p['ci95'][1]:.1f}%, {p['ci_method']})" if p["ci_method"] == "wilson"
        else f" (95% CI {p['ci95'][0]:.4g}–{p['ci95'][1]:.4g}, {p['ci_method']})")
    lines = [
        f"{'oracle' if s['oracle'] else 'candidate'} {s['candidate']['hash'][:12]} on {s['tier']}: "
        f"{p['metric']} {mean}{ci} over {p['n']} episode(s)",
        "secondary: " + ", ".join(f"{k} {v:.4g}" if isinstance(v, (int, float)) else f"{k} n/a"
                                  for k, v in s["secondary"].items()),
        f"complete: {'yes' if s['complete'] else 'NO'} · infra failures {s['infra_failures']} · agent errors "
        f"{s['agent_errors']} · cached {s['cached']} · {s.get('backend', 'local')} workers {s['workers']} · "
        f"in flight {s['in_flight']} · "
        f"wall {s['wall_seconds']:.1f} s · model cost ${s['model']['cost_usd']:.4f}",
        *([_schedule_line(s["schedule"])] if s.get("schedule") else []),
        f"metrics: {s['metrics_path']}",
        f"episode logs: {s['episodes_dir']}",
    ]
    if s.get("infra_cause"):
        lines.append(f"incomplete: {s['infra_cause']}")
    for w in s.get("warnings", []):
        lines.append(f"warning: {w}")
    gate = s.get("smoke_gate")
    if gate is not None:
        lines.append(f"smoke gate: {'PASSED' if gate['passed'] else 'FAILED'}")
        lines.extend(f"  - {r}" for r in gate["reasons"])
    return "\n".join(lines)


def register(main: click.Group) -> None:
    """Attach this module's commands to the root group."""
    main.add_command(experiment)

"""`architect executors`: the installed executor plug-ins, their seeds, and
whether their data and optional dependencies are present."""

from __future__ import annotations

import click

from harness.cli.conventions import JSON_OPTION, emit, handled


def _tiers(spec) -> dict:
    """Each tier of the executor's profile (harness.rundir.tiers.tier_table), or the profile's error."""
    from harness.errors import UserError
    from harness.executor_api import Executor, load_profile
    from harness.rundir.tiers import tier_table

    try:
        return tier_table(Executor(spec=spec, profile=load_profile(spec.profile_path, spec)))
    except UserError as exc:
        return {"error": exc.message}


def executor_summary(spec) -> dict:
    missing = set(spec.missing_dependencies())
    return {
        "name": spec.name,
        "package": spec.package,
        "seeds": {seed: str(spec.seed_dir(seed)) for seed in spec.seeds},
        "episode_keys": list(spec.episode_keys),
        "metrics": dict(spec.metrics),
        "primary_metric": spec.primary_metric,
        "group_key": spec.level_key,
        "tiers": _tiers(spec),
        "data": [{"name": d.name, "present": d.present(), "fetch": f"architect data fetch {d.name}"} for d in spec.data],
        "optional_dependencies": {name: name not in missing for name in spec.optional_dependencies},
        "oracle": spec.oracle is not None,
        "requires": {name: name not in set(spec.missing_requirements()) for name in spec.requires},
        "install": spec.install,
        "details": spec.details(),
    }


def _detail_lines(details: dict) -> list[str]:
    lines = []
    for key, value in details.items():
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            lines.append(f"  {key}:")
            lines.extend(f"    {name}: " + ", ".join(f"{k} {v}" for k, v in facts.items()) for name, facts in value.items())
        elif isinstance(value, dict):
            lines.append(f"  {key}: " + ", ".join(f"{k} {v if v is not None else 'not installed'}"
                                                  for k, v in value.items()))
        else:
            lines.append(f"  {key}: {value}")
    return lines


def _tier_lines(tiers: dict, group_key: str) -> list[str]:
    if "error" in tiers:
        return [f"  tiers: {tiers['error']}"]
    grouped = any(len(t["groups"]) > 1 for t in tiers.values())
    lines = [f"  tiers (groups by {group_key}):" if grouped else
             f"  tiers (one group each: the episodes carry no {group_key!r} key):"]
    for name, t in tiers.items():
        groups = t["groups"]
        covers = "one group" if len(groups) == 1 else ", ".join(f"{g} {n}" for g, n in groups.items())
        kind = t["kind"] + (": " + t["description"] if t["kind"] == "other" and t["description"] else "")
        where = f"; certified on {t['certifies_against']}" if t.get("certifies_against") else ""
        split = f"; {t['split']}" if t.get("split") else ""
        lines.append(f"    {name}: {kind}, {t['episodes']} episodes ({covers}){where}{split}")
    return lines


def _human(executors: list[dict], broken: dict[str, str]) -> str:
    lines = []
    for ex in executors:
        lines.append(f"{ex['name']}  (episodes keyed by {', '.join(ex['episode_keys'])}; "
                     f"primary metric {ex['primary_metric']}; oracle: {'yes' if ex['oracle'] else 'no'})")
        lines.append(f"  seeds: {', '.join(ex['seeds']) or 'none'}")
        lines.extend(_tier_lines(ex["tiers"], ex["group_key"]))
        for d in ex["data"]:
            lines.append(f"  data {d['name']}: {'present' if d['present'] else 'MISSING — fetch with: ' + d['fetch']}")
        for name, present in ex["optional_dependencies"].items():
            lines.append(f"  optional dependency {name}: {'installed' if present else 'not installed'}")
        for name, present in ex["requires"].items():
            lines.append(f"  requires {name}: {'installed' if present else 'NOT INSTALLED'}")
        if ex["install"] and not all(ex["requires"].values()):
            lines.append(f"  install with: {ex['install']}")
        lines.extend(_detail_lines(ex["details"]))
    for name, error in broken.items():
        lines.append(f"{name}  BROKEN: {error}")
    return "\n".join(lines) or "no executors installed (an executor registers through an `architect.executors` entry point)"


@click.command("executors")
@JSON_OPTION
@handled
def executors_cmd(as_json):
    """List the installed executors (environment plug-ins) with their seeds,
    tiers (size, kind, groups covered, the sealed holdout a search tier is
    certified on), data and optional dependencies. `architect init <variant> <seed>` takes any
    seed listed here."""
    from harness.executor_api import discover_executors, discovery_errors

    executors = [executor_summary(spec) for _, spec in sorted(discover_executors().items())]
    broken = discovery_errors()
    emit({"ok": True, "executors": executors, "broken": broken}, as_json, human=_human(executors, broken))


def register(main: click.Group) -> None:
    main.add_command(executors_cmd)

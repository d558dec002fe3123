"""`architect executors`: the installed executor plug-ins, their seeds, and
whether their data and optional dependencies are present."""

from __future__ import annotations

import click

from harness.cli.conventions import JSON_OPTION, emit, handled


def executor_summary(spec) -> dict:
    missing = set(spec.missing_dependencies())
    return {
        "name": spec.name,
        "package": spec.package,
        "seeds": {seed: str(spec.seed_dir(seed)) for seed in spec.seeds},
        "episode_keys": list(spec.episode_keys),
        "metrics": dict(spec.metrics),
        "primary_metric": spec.primary_metric,
        "data": [{"name": d.name, "present": d.present(), "fetch": f"architect data fetch {d.name}"} for d in spec.data],
        "optional_dependencies": {name: name not in missing for name in spec.optional_dependencies},
        "oracle": spec.oracle is not None,
    }


def _human(executors: list[dict], broken: dict[str, str]) -> str:
    lines = []
    for ex in executors:
        lines.append(f"{ex['name']}  (episodes keyed by {', '.join(ex['episode_keys'])}; "
                     f"primary metric {ex['primary_metric']}; oracle: {'yes' if ex['oracle'] else 'no'})")
        lines.append(f"  seeds: {', '.join(ex['seeds']) or 'none'}")
        for d in ex["data"]:
            lines.append(f"  data {d['name']}: {'present' if d['present'] else 'MISSING — fetch with: ' + d['fetch']}")
        for name, present in ex["optional_dependencies"].items():
            lines.append(f"  optional dependency {name}: {'installed' if present else 'not installed'}")
    for name, error in broken.items():
        lines.append(f"{name}  BROKEN: {error}")
    return "\n".join(lines) or "no executors installed (an executor registers through an `architect.executors` entry point)"


@click.command("executors")
@JSON_OPTION
@handled
def executors_cmd(as_json):
    """List the installed executors (environment plug-ins) with their seeds,
    data and optional dependencies. `architect init <variant> <seed>` takes any
    seed listed here."""
    from harness.executor_api import discover_executors, discovery_errors

    executors = [executor_summary(spec) for _, spec in sorted(discover_executors().items())]
    broken = discovery_errors()
    emit({"ok": True, "executors": executors, "broken": broken}, as_json, human=_human(executors, broken))


def register(main: click.Group) -> None:
    main.add_command(executors_cmd)

"""Episode list files: a researcher's own episodes as a tier, without editing the
installed package (`experiment run --episodes FILE`, `init`/`loop --episodes FILE`,
which stores the list in the run's manifest under `tiers:`).

A list is JSONL (one episode object per line) or a JSON or YAML file holding a
list of episode objects. Each episode is validated by the schema its executor's
spec declares (`episode_schema`, in `schemas/`); an error names the file, the line
(JSONL) or the index (a list) and the field."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from harness.fileio import InputError, parse_json, read_text

MAX_EPISODES = 100_000
TIER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # as schemas/manifest.schema.json's `tiers:` keys


def read_episode_list(path: Path, spec) -> list[dict]:
    """The episodes of an episode list file, each valid for executor `spec`, in file order."""
    from harness.schemas import validate_instance

    if spec.episode_schema is None:
        raise InputError(f"{path}: executor {spec.name!r} declares no episode schema, so it takes no episode list file")
    text = read_text(path, "episode list")
    entries = _entries(text, str(path))
    if not entries:
        raise InputError(f"{path}: the episode list holds no episodes")
    if len(entries) > MAX_EPISODES:
        raise InputError(f"{path}: the episode list holds {len(entries)} episodes, more than {MAX_EPISODES}")
    seen: dict[tuple, str] = {}
    for where, episode in entries:
        problems = validate_instance(spec.episode_schema, episode)
        if problems:
            raise InputError(f"{path}: {where}: not a {spec.name} episode: at {problems[0]} "
                             f"(schemas/{spec.episode_schema}.schema.json)")
        key = tuple(str(episode[k]) for k in spec.episode_keys)
        if key in seen:
            raise InputError(f"{path}: {where}: repeats the episode of {seen[key]} "
                             f"({', '.join(f'{k}={episode[k]}' for k in spec.episode_keys)})")
        seen[key] = where
    return [episode for _, episode in entries]


def _entries(text: str, source: str) -> list[tuple[str, object]]:
    """(where, value) of each entry: "line N" of a JSONL file, "episode [i]" of a list."""
    if source.endswith(".jsonl"):
        return [(f"line {number}", parse_json(line, source, "episode list", first_line=number))
                for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if source.endswith((".yaml", ".yml")):
        from harness.fileio import parse_yaml

        data = parse_yaml(text, source, "episode list")
    elif source.endswith(".json"):
        data = parse_json(text, source, "episode list")
    else:
        raise InputError(f"{source}: an episode list is a .jsonl, .json, .yaml or .yml file")
    if not isinstance(data, list):
        raise InputError(f"{source}: an episode list holds a list of episodes, not a {type(data).__name__}")
    return [(f"episode [{index}]", item) for index, item in enumerate(data)]


def episode_list_tier(path: Path, spec, *, sealed: bool = False) -> dict:
    """A tier (the shape of a profile's and a manifest's `tiers:` entries) holding the file's episodes."""
    episodes = read_episode_list(path, spec)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    tier = {"description": f"episodes of {path.name} (sha256 {digest[:12]})", "episodes": episodes}
    if sealed:
        tier["sealed"] = True
    return tier


def tier_name(path: Path) -> str:
    """The tier an episode list defines when none is named: the file's name without its suffix."""
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in path.stem).lstrip("._-")
    return name or "episodes"


def check_tier_name(name: str, option: str) -> None:
    if not TIER_NAME.match(name):
        raise InputError(f"{option} {name!r}: a tier name is letters, digits, '.', '_' and '-', starting with a "
                         "letter or digit")


def run_tiers(executor, episodes: Path | None, holdout: Path | None,
              tier: str | None) -> tuple[dict | None, str | None, str | None]:
    """(the manifest's `tiers:`, performance tier, holdout tier) of a new run given `--episodes
    FILE` (its performance tier, named `tier` or after the file) and `--holdout FILE` (its sealed
    certification tier, sharing no episode with any other tier); None where not given."""
    if episodes is None and holdout is None:
        return None, tier, None
    out = {}
    if episodes is not None:
        tier = tier or tier_name(episodes)
        check_tier_name(tier, "--tier")
        out[tier] = episode_list_tier(episodes, executor.spec)
    holdout_name = None
    if holdout is not None:
        holdout_name = tier_name(holdout)
        check_tier_name(holdout_name, "--holdout")
        if holdout_name in out:
            raise InputError(f"{holdout}: --holdout and --episodes name the same tier {holdout_name!r}; rename a file")
        out[holdout_name] = episode_list_tier(holdout, executor.spec, sealed=True)
    merged = executor.with_tiers(out)
    if holdout_name is not None:
        held = {e["episode_id"] for e in merged.episodes(holdout_name)}
        for other in merged.profile["tiers"]:
            shared = held & {e["episode_id"] for e in merged.episodes(other)} if other != holdout_name else set()
            if shared:
                raise InputError(f"{holdout}: the sealed holdout shares {len(shared)} episode(s) with tier "
                                 f"{other!r}, e.g. {sorted(shared)[0]}")
    return out, tier, holdout_name

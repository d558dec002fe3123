"""The groups a tier's episodes fall into (the executor's `level_key`: BabyAI's
level, LIBERO's suite), what each tier is for, and the deterministic subset a
cap of N episodes takes: balanced over the groups, not the tier's first N."""

from __future__ import annotations

from collections import Counter

ONE_GROUP = "all"
SPLITS_VARIANT = "shaper"  # the variant an executor profile's `splits` are for


def group_of(episode: dict, level_key: str) -> str:
    """The episode's group: its `level_key` value, else the one group `all`."""
    value = episode.get(level_key)
    return str(value) if value not in (None, "") else ONE_GROUP


def group_counts(episodes: list[dict], level_key: str) -> dict[str, int]:
    """Episodes per group, in the order the groups first appear."""
    return dict(Counter(group_of(e, level_key) for e in episodes))


def balanced_subset(episodes: list[dict], size: int, level_key: str) -> list[dict]:
    """`size` episodes taken round-robin over the groups (each group's own order kept),
    returned in tier order: with one group, the first `size`."""
    by_group: dict[str, list[int]] = {}
    for index, episode in enumerate(episodes):
        by_group.setdefault(group_of(episode, level_key), []).append(index)
    queues = [list(reversed(indexes)) for indexes in by_group.values()]
    chosen: list[int] = []
    while len(chosen) < min(size, len(episodes)):
        for queue in queues:
            if queue and len(chosen) < size:
                chosen.append(queue.pop())
    return [episodes[i] for i in sorted(chosen)]


def subset_text(episodes: list[dict], size: int | None, level_key: str) -> str | None:
    """What a cap of `size` episodes takes from the tier, in words (None: no cap, or the whole tier)."""
    if size is None or size >= len(episodes):
        return None
    counts = group_counts(balanced_subset(episodes, size, level_key), level_key)
    if len(group_counts(episodes, level_key)) == 1:
        return f"the first {size} of the tier's {len(episodes)} episodes (one group)"
    spread = ", ".join(f"{g} {n}" for g, n in counts.items())
    return (f"{size} of the tier's {len(episodes)} episodes, taken round-robin over its "
            f"{len(group_counts(episodes, level_key))} groups ({level_key}) in tier order: {spread}")


def split_names(profile: dict) -> dict[str, str]:
    """Tier -> SHAPER split name (train, validation, test/C1 ...) of the profile's `splits`."""
    from harness.executor_api import split_tiers

    return {tier: split for split, tier in split_tiers(profile.get("splits") or {}).items()}


def tier_kind(profile: dict, name: str) -> str:
    """smoke, search, protocol (certification reruns), sealed holdout, split (another
    variant's), or other (see the tier's description)."""
    spec = profile["tiers"][name]
    if name in split_names(profile):
        return "split"
    if spec.get("sealed"):
        return "sealed holdout"
    if name == "smoke":
        return "smoke"
    if name == profile.get("rerun_tier"):
        return "protocol"
    if name == profile.get("performance_tier") or name.startswith("search"):
        return "search"
    return "other"


def coverage_warning(executor, tier: str, holdout: str | None) -> str | None:
    """A warning when `tier` covers fewer groups than the holdout certification tests it on."""
    if holdout is None:
        return None
    key = executor.spec.level_key
    searched = group_counts(executor.episodes(tier), key)
    held = group_counts(executor.episodes(holdout), key)
    missing = [g for g in held if g not in searched]
    if not missing:
        return None
    return (f"tier {tier!r} covers {len(held) - len(missing)} of the {len(held)} groups ({key}) its holdout "
            f"{holdout!r} covers: no {', '.join(missing)} episodes, so certification tests groups the search "
            "never saw; choose a tier covering them (`architect executors` lists each tier's groups)")


def capped_tier_episodes(executor, tier: str, cap: int | None) -> list[dict]:
    """The episodes of TIER an evaluation capped at CAP takes (harness.evaluation.evaluate's subset)."""
    episodes = executor.episodes(tier)
    return balanced_subset(episodes, cap, executor.spec.level_key) if cap else episodes

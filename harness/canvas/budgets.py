"""The limits one episode runs under, resolved once at its start.

Two sides bound an episode: the candidate's own limits (the graph's `budgets`)
and the task's caps (the episode's `max_steps` and `wall_seconds`, which
`harness.executor_api.episode_caps` resolves from the executor profile). The
runtime enforces the smaller of the two; no simulator node caps steps again.
"""

from __future__ import annotations

CAPPED = ("max_steps", "wall_seconds")


def episode_limits(graph_budgets: dict, episode: dict) -> dict:
    """`max_steps` and `wall_seconds` the runtime enforces on EPISODE: the smaller of the
    graph's budget and the episode's cap; a limit neither side sets is absent."""
    limits = {}
    for key in CAPPED:
        given = [v for v in (graph_budgets.get(key), episode.get(key)) if v is not None]
        if given:
            limits[key] = min(given)
    return limits

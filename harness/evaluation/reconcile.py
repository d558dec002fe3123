"""Accounting reconciliation: the model calls each node made (counted by the
runtime's accounted client, `ctx.model`) against the calls the episode log
reports (the `calls` lists nodes put in their voluntary self-report). A node
whose log accounts for fewer calls than it made gets a `log_gap` finding."""

from __future__ import annotations


def reported_calls(firings: list[dict]) -> dict[str, int]:
    """Calls per node named in the log's self-reports (an entry may name another node)."""
    counts: dict[str, int] = {}
    for record in firings:
        for call in (record.get("self") or {}).get("calls") or ():
            node = call.get("node", record["node"]) if isinstance(call, dict) else record["node"]
            counts[node] = counts.get(node, 0) + 1
    return counts


def log_gaps(firings: list[dict], calls_by_node: dict[str, int]) -> list[dict]:
    """`[{"node", "count"}]`: calls made but missing from the log, by node."""
    reported = reported_calls(firings)
    return [{"node": node, "count": made - reported.get(node, 0)}
            for node, made in sorted(calls_by_node.items()) if made > reported.get(node, 0)]


def findings(episodes: list[dict]) -> list[dict]:
    """metrics.json findings: each node's log gap summed over episodes."""
    total: dict[str, list[int]] = {}
    for episode in episodes:
        for gap in episode.get("log_gap") or ():
            entry = total.setdefault(gap["node"], [0, 0])
            entry[0] += gap["count"]
            entry[1] += 1
    return [{"kind": "log_gap", "node": node, "count": count, "episodes": n,
             "message": f"node {node!r} made {count} model call(s) in {n} episode(s) that the episode log "
                        "does not account for"}
            for node, (count, n) in sorted(total.items())]

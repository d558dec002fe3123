"""The canvas: typed node graphs that are validated, patched, hashed and run.

    from harness.canvas import GraphRunner, load_graph, validate_graph, apply_patch, diff_graphs, graph_hash, EpisodeLog

The names below are imported from their modules on first use: a command that
only loads and validates a graph does not import the runtime, the patcher or
the log (`architect validate` starts faster).
"""

from importlib import import_module

_HOMES = {
    "EpisodeLog": "episode_log",
    "CompositeError": "graph", "GraphLoadError": "graph", "flatten": "graph", "load_graph": "graph",
    "candidate_hash": "hashing", "graph_hash": "hashing",
    "PatchError": "patch", "apply_patch": "patch", "diff_graphs": "patch",
    "Context": "registry", "Node": "registry", "SimulatorNode": "registry", "default_registry": "registry",
    "for_graph": "registry", "node_type": "registry",
    "GraphError": "runtime", "GraphRunner": "runtime",
    "compatible": "types",
    "Problem": "validate", "validate_graph": "validate",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'harness.canvas' has no attribute {name!r}")
    value = getattr(import_module(f"harness.canvas.{home}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOMES))

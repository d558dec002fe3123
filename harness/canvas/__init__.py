"""The canvas: typed node graphs that are validated, patched, hashed and run.

    from harness.canvas import GraphRunner, load_graph, validate_graph, apply_patch, diff_graphs, graph_hash, EpisodeLog
"""

from harness.canvas.episode_log import EpisodeLog
from harness.canvas.graph import CompositeError, GraphLoadError, flatten, load_graph
from harness.canvas.hashing import candidate_hash, graph_hash
from harness.canvas.patch import PatchError, apply_patch, diff_graphs
from harness.canvas.registry import Context, Node, SimulatorNode, default_registry, for_graph, node_type
from harness.canvas.runtime import GraphError, GraphRunner
from harness.canvas.types import compatible
from harness.canvas.validate import Problem, validate_graph

__all__ = [
    "CompositeError", "Context", "EpisodeLog", "GraphError", "GraphLoadError", "GraphRunner", "Node", "PatchError",
    "Problem", "SimulatorNode", "apply_patch", "candidate_hash", "compatible", "default_registry", "diff_graphs",
    "flatten", "for_graph", "graph_hash", "load_graph", "node_type", "validate_graph",
]

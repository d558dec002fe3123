"""SmartWay executor: R2R navigation on the Matterport3D graphs with waypoint actions
— a discrete-graph port of SmartWay's zero-shot VLN-CE navigator (Shi et al. 2025)
and its Open-Nav chain; not VLN-CE: the navigable neighbours stand in for the
waypoint predictor. The MatterSim-compatible simulator, caption observations and
R2R metrics are those of `executors.mp3d`. See README.md.

This module only declares the executor (`EXECUTOR`, published under the
`architect.executors` entry-point group) and imports nothing heavy; the node
types register when `executors.smartway.node_types` is imported.
"""

from harness.executor_api import DataRequirement, ExecutorSpec, in_tree_seeds

EXECUTOR = ExecutorSpec(
    name="smartway",
    package="executors.smartway",
    node_modules=("executors.smartway.node_types",),
    episode_keys=("instr_id",),
    episode_content="executors.mp3d.tiers:episode_content",
    fresh_episodes="executors.mp3d.fresh:fresh_episodes",
    metrics={"success_rate": "higher", "spl": "higher", "ndtw": "higher", "sdtw": "higher",
             "oracle_success": "higher", "nav_error": "lower", "trajectory_length": "lower",
             "trajectory_steps": "lower", "stopped": "higher"},
    primary_metric="success_rate",
    seeds=in_tree_seeds("smartway", "smartway-heuristic"),
    renderer="executors.mp3d.render:render_r2r",
    data=(DataRequirement(name="r2r", module="executors.mp3d.data_r2r"),),
    optional_dependencies=("MatterSim",),
    oracle="executors.smartway.oracle:oracle",
    failure_kind="executors.mp3d.failures:failure_kind",
    provenance="executors.mp3d.data_r2r:provenance",
    worker_preload=("executors.mp3d.sim",),
    sandbox_modules=("executors.mp3d.instructions",),
    episode_schema="episode_smartway",
)


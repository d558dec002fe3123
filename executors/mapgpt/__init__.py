"""MapGPT executor: R2R navigation on the Matterport3D graphs through a
MatterSim-compatible simulator (the real MatterSim when importable, else the
graph backend), MapGPT's module chain as node types, R2R metrics, tiers and a
shortest-path oracle. See README.md.

This module only declares the executor (`EXECUTOR`, published under the
`architect.executors` entry-point group) and imports nothing heavy; the node
types register when `executors.mapgpt.node_types` is imported.
"""

from harness.executor_api import DataRequirement, ExecutorSpec, in_tree_seeds

EXECUTOR = ExecutorSpec(
    name="mapgpt",
    package="executors.mapgpt",
    node_modules=("executors.mapgpt.node_types",),
    episode_keys=("instr_id",),
    episode_content="executors.mp3d.tiers:episode_content",
    fresh_episodes="executors.mp3d.fresh:fresh_episodes",
    metrics={"success_rate": "higher", "spl": "higher", "ndtw": "higher", "sdtw": "higher",
             "oracle_success": "higher", "nav_error": "lower", "trajectory_length": "lower",
             "trajectory_steps": "lower"},
    primary_metric="success_rate",
    seeds=in_tree_seeds("mapgpt", "mapgpt-heuristic"),
    stand_in_planner="executors.mapgpt.stand_ins:scripted_mapgpt_planner",
    renderer="executors.mp3d.render:render_r2r",
    data=(DataRequirement(name="r2r", module="executors.mp3d.data_r2r"),),
    optional_dependencies=("MatterSim",),
    oracle="executors.mapgpt.oracle:oracle",
    failure_kind="executors.mp3d.failures:failure_kind",
    provenance="executors.mp3d.data_r2r:provenance",
    worker_preload=("executors.mp3d.sim",),
    episode_schema="episode_mapgpt",
)


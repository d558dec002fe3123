"""Manipulation executor on robosuite (MuJoCo): simulator node, the VoxPoser LMP
chain and the VLM-planner + VLA policy nodes, and adapters for VLABench and LIBERO.

This module only declares the executor (`EXECUTOR`, published under the
`architect.executors` entry-point group); it imports neither robosuite nor the
node modules. The node types register when `executors.manipulation.node_types`
is imported.
"""

from harness.executor_api import ExecutorSpec, in_tree_seeds

EXECUTOR = ExecutorSpec(
    name="manipulation",
    package="executors.manipulation",
    node_modules=("executors.manipulation.node_types",),
    episode_keys=("level", "seed"),
    episode_content="executors.manipulation.tiers:episode_content",
    metrics={"success_rate": "higher", "steps": "lower", "reward": "higher"},
    primary_metric="success_rate",
    seeds=in_tree_seeds("voxposer-scripted", "voxposer", "vla", "vla-llm"),
    renderer="harness.embodied.render:render_episode",
    optional_dependencies=("robosuite", "mujoco", "openpi_client"),
    worker_preload=("executors.manipulation.preload",),
    episode_schema="episode_manipulation",
)

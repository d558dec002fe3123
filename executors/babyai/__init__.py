"""BabyAI (minigrid) executor: simulator node, search alphabet, oracle, profile, seeds.

This module only declares the executor (`EXECUTOR`, published under the
`architect.executors` entry-point group); it imports nothing of minigrid.
The node types register when `executors.babyai.node_types` is imported.

Explicit STOP: minigrid reads BABYAI_DONE_ACTIONS when its BabyAI verifier
module is first imported, so it is set here, before any submodule imports it.
"""

import os

from harness.executor_api import ExecutorSpec, in_tree_seeds

os.environ["BABYAI_DONE_ACTIONS"] = "1"

EXECUTOR = ExecutorSpec(
    name="babyai",
    package="executors.babyai",
    node_modules=("executors.babyai.node_types",),
    episode_keys=("level", "seed"),
    metrics={"success_rate": "higher", "steps": "lower", "reward": "higher", "path_efficiency": "higher"},
    primary_metric="success_rate",
    seeds=in_tree_seeds("babyai", "babyai-llm"),
    tier_expander="executors.babyai.tiers:expand_tier",
    episode_content="executors.babyai.tiers:episode_content",
    optional_dependencies=("openpi_client",),
    oracle="executors.babyai.oracle:oracle",
    state_renderer="executors.babyai.render:render_state",
    renderer="executors.babyai.render:render_episode",
    worker_preload=("executors.babyai.envs",),
    stand_in_planner="executors.babyai.stand_ins:scripted_planner",
    sandbox_modules=("executors.babyai.world",),
    episode_schema="episode_babyai",
)

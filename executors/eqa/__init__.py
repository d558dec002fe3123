"""EQA executor: embodied question answering on the Matterport3D graphs — a
discrete-graph port of ExploreEQA's setting (HM-EQA runs in Habitat on HM3D
meshes; this does not). Four-way multiple-choice questions generated from
REVERIE's objects and Matterport's room labels, the MatterSim-compatible
simulator of `executors.mp3d`, ExploreEQA's chain as node types, tiers split by
scan, and an answer-reading oracle. See README.md.

This module only declares the executor (`EXECUTOR`, published under the
`architect.executors` entry-point group) and imports nothing heavy; the node
types register when `executors.eqa.node_types` is imported.
"""

from harness.executor_api import DataRequirement, ExecutorSpec, in_tree_seeds

TYPES = ("existence", "count", "room_location", "identification")


def accuracy_by_type(question_type: str, correct: float) -> dict:
    """An episode's per-type accuracy keys: its own type's, and `accuracy_without_room` for every
    type but room location (R2R's val_unseen scans have no room labels, so a score comparable
    across splits leaves that type out)."""
    keys = {f"accuracy_{question_type}": correct}
    if question_type != "room_location":
        keys["accuracy_without_room"] = correct
    return keys

EXECUTOR = ExecutorSpec(
    name="eqa",
    package="executors.eqa",
    node_modules=("executors.eqa.node_types",),
    episode_keys=("question_id",),
    episode_content="executors.eqa.tiers:episode_content",
    fresh_episodes="executors.eqa.tiers:fresh_episodes",
    metrics={"accuracy": "higher", **{f"accuracy_{t}": "higher" for t in TYPES},
             "accuracy_without_room": "higher", "steps": "lower",
             "path_length": "lower", "stopped": "higher"},
    primary_metric="accuracy",
    seeds=in_tree_seeds("explore-eqa", "explore-eqa-heuristic"),
    renderer="executors.eqa.render:render_episode",
    data=(DataRequirement(name="r2r", module="executors.mp3d.data_r2r"),
          DataRequirement(name="reverie", module="executors.eqa.data_reverie"),
          DataRequirement(name="mp3d-regions", module="executors.eqa.data_regions")),
    optional_dependencies=("MatterSim",),
    oracle="executors.eqa.oracle:oracle",
    failure_kind="executors.eqa.failures:failure_kind",
    provenance="executors.eqa:provenance",
    worker_preload=("executors.mp3d.sim",),
    sandbox_modules=("executors.eqa.vocabulary",),
    episode_schema="episode_eqa",
)


def provenance() -> dict:
    """The simulator backend `auto` picks here, the three data sets' versions (digests of their
    checked files) and completeness, and the question set: its version, the checksum of the
    set generated from the installed data, and whether that is the released set."""
    from executors.eqa import data_regions, data_reverie, questions
    from executors.mp3d import data_r2r
    from executors.mp3d.sim import real_mattersim_available

    sets = {"r2r": data_r2r.MANIFEST, "reverie": data_reverie.MANIFEST, "mp3d-regions": data_regions.MANIFEST}
    out = {"backend": "mattersim" if real_mattersim_available() else "graph",
           "data_sha256": {name: m.digest() for name, m in sets.items()},
           "data_complete": {name: m.complete() for name, m in sets.items()},
           "question_set_version": questions.QUESTION_SET_VERSION}
    if all(out["data_complete"].values()):
        checksum = questions.question_set_sha256()
        out.update(question_set_sha256=checksum, question_set_released=checksum == questions.RELEASED_SHA256)
    return out

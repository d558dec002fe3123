"""MapGPT executor: R2R navigation on the Matterport3D graphs through a
MatterSim-compatible simulator (the real MatterSim when importable, else the
graph backend), MapGPT's module chain as node types, R2R metrics, tiers and a
shortest-path oracle. See README.md."""

from executors.mapgpt import node_types  # noqa: F401
from executors.mapgpt.oracle import oracle  # noqa: F401


def provenance() -> dict:
    """What produced this executor's results: the simulator backend the
    `auto` setting picks here, and the data version (digest of the checked
    files' sha256) with the data folder and whether every file is present."""
    from executors.mapgpt import data
    from executors.mapgpt.sim import real_mattersim_available

    root = data.r2r_dir()
    return {"backend": "mattersim" if real_mattersim_available() else "graph",
            "data_sha256": data.manifest_digest(), "data_dir": str(root),
            "data_complete": not data.missing(root)}

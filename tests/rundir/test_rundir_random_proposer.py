"""The random proposer samples legal edits from the typed alphabet, without any rollout."""

from __future__ import annotations

import json
from pathlib import Path

from harness.canvas.hashing import graph_hash
from harness.canvas.patch import apply_patch
from harness.canvas.registry import for_graph
from harness.canvas.validate import validate_graph
from harness.rundir.proposal import AXES
from harness.variants.random_proposer.proposer import RandomProposer, axis_for

SEED_GRAPH = json.loads((Path(__file__).resolve().parents[2] / "seeds" / "babyai" / "graph.json").read_text())


def test_every_proposal_is_statically_valid_and_reproducible():
    moves = set()
    for attempt in range(30):
        first = RandomProposer(3, attempt).propose(SEED_GRAPH)
        again = RandomProposer(3, attempt).propose(SEED_GRAPH)
        assert first.patch == again.patch and first.description == again.description
        child = apply_patch(SEED_GRAPH, first.patch)
        assert child == first.graph and graph_hash(child) != graph_hash(SEED_GRAPH)
        assert [p for p in validate_graph(child) if p.severity == "error"] == []
        assert first.axes and set(first.axes) <= set(AXES)
        moves.add(first.move)
    assert len(moves) >= 3, moves  # several kinds of edit, not one


def test_a_role_is_labelled_by_its_own_axis_before_any_it_contains():
    # "replanning" (how much of a chunk to commit to) contains "plan"
    assert axis_for("replanning") == "control/action gating"
    assert axis_for("planner") == axis_for("planning") == "planning"
    assert axis_for("Perception") == "observation" and axis_for(None) == "topology"


def test_different_seeds_explore_differently_and_seen_graphs_are_not_proposed_again():
    by_seed = {seed: [RandomProposer(seed, a).propose(SEED_GRAPH).description for a in range(8)] for seed in (1, 2)}
    assert by_seed[1] != by_seed[2]
    first = RandomProposer(5, 0).propose(SEED_GRAPH)
    other = RandomProposer(5, 0).propose(SEED_GRAPH, seen={graph_hash(first.graph)})
    assert graph_hash(other.graph) != graph_hash(first.graph)


def test_swaps_keep_the_role_and_config_values_stay_in_their_schema():
    registry = for_graph(SEED_GRAPH)
    for attempt in range(40):
        proposal = RandomProposer(9, attempt).propose(SEED_GRAPH, moves=("swap", "set_config"))
        for op in proposal.patch["ops"]:
            if op["op"] == "retype_node":
                old = registry.get(SEED_GRAPH["nodes"][op["id"]]["type"])
                assert registry.get(op["type"]).role == old.role
            if op["op"] == "set_config":
                node_type = registry.get(SEED_GRAPH["nodes"][op["id"]]["type"])
                config = proposal.graph["nodes"][op["id"]]["config"]
                assert list(node_type.config_validator.iter_errors(config)) == []


def test_the_simulator_config_is_never_edited():
    for attempt in range(40):
        proposal = RandomProposer(4, attempt).propose(SEED_GRAPH, moves=("set_config",))
        assert proposal.graph["nodes"]["sim"] == SEED_GRAPH["nodes"]["sim"]

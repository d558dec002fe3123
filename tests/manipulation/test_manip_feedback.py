"""The simulator's `feedback` reports the previous tick, as its port doc says: a node
firing at tick t reads `tick` t - 1 and the steps the actions sent at tick t - 1 added
(at tick 0 the reset's: steps 0, reward 0, tick 0)."""

from __future__ import annotations

import copy

from manipulation_kit import SEEDS, seed_graph

from harness.canvas.registry import Node, Registry, default_registry, node_type
from harness.canvas.runtime import GraphRunner


def test_feedback_reports_the_previous_ticks_actions_as_documented():
    overlay = Registry(parent=default_registry())
    seen: list[tuple[int, dict, int]] = []

    @node_type("probe.ManipFeedback", inputs={"feedback": "Feedback", "actions": "ActionChunk"}, outputs={},
               config_schema={"type": "object"}, registry=overlay)
    class Probe(Node):
        def step(self, inputs, ctx):
            seen.append((ctx.tick, copy.deepcopy(inputs["feedback"]), len(inputs["actions"])))
            return {}

    graph = seed_graph("voxposer-scripted")
    graph["nodes"]["probe"] = {"type": "probe.ManipFeedback", "config": {}}
    graph["edges"] += [{"from": "sim.feedback", "to": "probe.feedback"},
                       {"from": "control.actions", "to": "probe.actions"}]
    with GraphRunner(graph, registry=overlay, candidate_dir=SEEDS / "voxposer-scripted") as runner:
        result = runner.run_episode({"level": "Lift", "seed": 100, "episode_id": "Lift:100", "max_steps": 12})
        doc = runner.node_types["sim"].outputs["feedback"].doc
    assert result["error"] is None and len(seen) >= 3
    tick0, first, _ = seen[0]
    assert tick0 == 0 and first == {"steps": 0, "reward": 0.0, "tick": 0}
    for (tick, before, sent), (next_tick, feedback, _) in zip(seen, seen[1:]):
        assert next_tick == tick + 1
        assert feedback["tick"] == tick  # one less than the tick reading it
        assert feedback["steps"] == before["steps"] + sent  # what the previous tick's actions did
    assert all(f"'{key}'" in doc for key in first) and "It reports the previous tick" in doc
    assert "a node firing at tick t sees 'tick' t - 1" in doc

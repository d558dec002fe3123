"""An episode's deferred log against an eager snapshot: what a simulator declaring
`fresh_outputs` must pass (its steps are encoded after later steps ran)."""

from __future__ import annotations

from harness.canvas.episode_log import EpisodeLog, logged_value
from harness.evaluation.trace import array_of


class EagerLog:
    """Every port value converted the moment its node fired (by default as the log gives it
    back, arrays as lists): records (node, tick, inputs, outputs)."""

    enabled = True

    def __init__(self, convert=None):
        self.records, self.episode, self.result, self.ports = [], None, None, None
        self.convert = convert or (lambda v: plain(logged_value(v)))

    def forget(self):
        pass

    flush = forget

    def defer(self, node, node_type, tick, inputs, outputs, *rest):
        def snap(ports):
            return None if ports is None else {k: self.convert(v) for k, v in ports.items()}

        self.records.append((node, tick, snap(inputs), snap(outputs)))


def plain(value):
    """A logged value with its arrays as nested lists."""
    if isinstance(value, dict) and "$array" in value:
        return array_of(value).tolist()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return [plain(v) for v in value] if isinstance(value, list) else value


def deferred_and_eager(runner, episode: dict) -> tuple[list, list]:
    """The episode run twice on `runner`: its records as the episode log wrote them, and as
    an eager snapshot took them (node, tick, inputs, outputs)."""
    deferred, eager = EpisodeLog(), EagerLog()
    for log in (deferred, eager):
        result = runner.run_episode(dict(episode), log)
        assert result["error"] is None, result["error"]
    return [(r["node"], r["tick"], plain(r["inputs"]), plain(r["outputs"])) for r in deferred.records], eager.records

"""The episode-log reader's trace: the observation on every tick, the current
motion, divergence by logged value (never by object identity), and the human
view that shortens values and says so."""

from __future__ import annotations

from harness.canvas.episode_log import EpisodeLog
from harness.evaluation.trace import brief, divergence, parse_lines, ticks
from harness.rundir.evidence import render_episode


class Handle:
    """A handle as an LMP chain passes it: its address differs between runs."""

    def __init__(self, name: str):
        self.name = name

    def log_value(self):
        return {"lmp": self.name}


class Opaque:
    pass


PORTS = {"sim": {"type": "S", "outputs": {"gripper": "Gripper", "objects": "Objects"}},
         "planner": {"type": "P", "outputs": {"lmp": "LMP", "motion": "Motion", "note": "Any"}},
         "control": {"type": "C", "outputs": {"actions": "ActionChunk"}}}


def _episode(turn_at: int, ticks_: int = 4) -> list[dict]:
    """Three ticks of a small arm episode; from tick `turn_at` the controller turns."""
    log = EpisodeLog()
    log.ports = PORTS
    z = 0.5
    log.firing("sim", "S", 0, None, {"gripper": {"position": [0.1, 0.2, z], "opening": 0.04},
                                     "objects": {"cube": {"position": [0.3, 0.0, 0.02]}}}, 0.0)
    for tick in range(ticks_):
        outputs = {"lmp": Handle("planner"), "note": Opaque()}
        if tick in (0, 2):
            outputs["motion"] = {"movable": "gripper", "target": [0.3, 0.0, 0.1 * tick]}
        log.firing("planner", "P", tick, {"gripper": {"z": z}}, outputs, 0.0)
        action = [0.0, 0.0, -0.1, 0.5 if tick >= turn_at else 0.0, 0.0, 0.0, -1.0]
        log.firing("control", "C", tick, {"lmp": Handle("planner")}, {"actions": [action]}, 0.0)
        z -= 0.01
        log.firing("sim", "S", tick, {"actions": action}, {"gripper": {"position": [0.1, 0.2, z], "opening": 0.04},
                                                           "objects": {"cube": {"position": [0.3, 0.0, 0.02]}}}, 0.0)
    return parse_lines(log.to_lines(), "test log")


def test_every_tick_shows_what_the_simulator_showed_and_the_current_motion():
    header, firings = _episode(turn_at=99)
    view = ticks(firings, ports=header["ports"])
    assert [t["tick"] for t in view] == [0, 1, 2, 3]
    for t in view:  # the outputs of the previous tick's last step (tick 0: the reset's)
        assert t["observation"]["gripper"]["position"] == [0.1, 0.2, 0.5 - 0.01 * t["tick"]]
        assert t["observation"]["objects"] == {"cube": {"position": [0.3, 0.0, 0.02]}}
    assert [(t["motion"]["from"], t["motion"]["tick"]) for t in view] == [("planner.motion", 0), ("planner.motion", 0),
                                                                          ("planner.motion", 2), ("planner.motion", 2)]
    assert view[3]["motion"]["value"] == {"movable": "gripper", "target": [0.3, 0.0, 0.2]}
    planner = view[1]["nodes"][0]
    assert planner["outputs"]["lmp"] == {"$object": "Handle", "value": {"lmp": "planner"}}
    assert ticks(firings, only=2, ports=header["ports"])[0]["observation"]["gripper"]["position"][2] == 0.48


def test_divergence_compares_logged_values_never_object_identities():
    _, parent = _episode(turn_at=99)
    _, same = _episode(turn_at=99)  # new Handle and Opaque objects, elsewhere in memory
    assert divergence(parent, same) is None
    _, child = _episode(turn_at=2)
    point = divergence(parent, child)
    assert (point["tick"], point["node"], point["why"]) == (2, "control", "outputs differ")
    assert point["child_outputs"]["actions"][0][3] == 0.5 and point["parent_outputs"]["actions"][0][3] == 0.0
    assert point["first_action_tick"] == 2


def test_the_human_view_shortens_values_and_says_so():
    assert brief({"position": [0.123456, 2.0, -1e-9]}) == "{position: [0.123, 2, 0]}"
    assert brief("x" * 500, limit=20) == "'" + "x" * 18 + "…"
    assert brief({"$array": {"dtype": "|u1", "shape": [7, 7, 3], "base64": ""}}) == "<array |u1 7×7×3>"
    assert brief({"$object": "Handle", "value": {"lmp": "planner"}}) == "Handle({lmp: 'planner'})"
    header, firings = _episode(turn_at=99)
    text = render_episode({"label": "iteration 1", "episode_id": "Door:4", "success": False, "termination": "max_steps",
                           "steps": 4, "ticks": ticks(firings, ports=header["ports"])})
    assert "observation gripper: {position: [0.1, 0.2, 0.49], opening: 0.04}" in text
    assert "current motion (planner.motion, tick 2): {movable: 'gripper', target: [0.3, 0, 0.2]}" in text
    assert text.splitlines()[-1].startswith("(each value shortened to 160 characters")

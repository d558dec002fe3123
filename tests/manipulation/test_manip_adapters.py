"""The VLABench adapter: conversions on arrays in VLABench's own formats (its assets
cannot be fetched here), its ports (the LIBERO simulator's), and the import guard."""

from __future__ import annotations

import numpy as np
import pytest

from executors.manipulation.adapters import AdapterUnavailable, vlabench
from harness.embodied.openpi_format import quat_to_axis_angle

QUARTER_TURN_Z_XYZW = np.array([0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)])


def _frame(size: int) -> np.ndarray:
    frame = np.zeros((size, size, 3), np.uint8)
    frame[: size // 2] = 200  # top half bright
    frame[:, : size // 4, 1] = 90
    return frame


def test_vlabench_image_gripper_and_action_conversions():
    ee_state = np.array([0.1, -0.2, 1.08, np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4), 0.04])  # quat w first
    rgb = np.stack([_frame(480) * 0 + i for i in range(4)]).astype(np.uint8)  # right, left, front, wrist
    frames = vlabench.images({"rgb": rgb})
    assert list(frames) == ["right", "left", "front", "wrist"]
    assert frames["front"].max() == 2 and frames["wrist"].max() == 3 and frames["front"].shape == (480, 480, 3)
    state = vlabench.gripper(ee_state)
    np.testing.assert_allclose(state["quaternion"], [0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)])  # x, y, z, w
    assert state["position"] == [0.1, -0.2, 1.08] and state["opening"] == 0.04 and state["fingers"] == [0.02, -0.02]
    np.testing.assert_allclose(quat_to_axis_angle(state["quaternion"]), [0, 0, np.pi / 2], atol=1e-9)
    position, quat, fingers = vlabench.target_pose([0.1, 0.2, 0.3, 0, 0, np.pi / 2, 0.5])
    np.testing.assert_allclose(position, ee_state[:3])
    np.testing.assert_allclose(quat, ee_state[3:7], atol=1e-9)
    assert fingers.tolist() == [0.04, 0.04]
    assert vlabench.target_pose([0, 0, 0, 0, 0, 0, 0.05])[2].tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="4 x H x W x 3"):
        vlabench.images({"rgb": rgb[:3]})
    with pytest.raises(ValueError, match="8 numbers"):
        vlabench.gripper(ee_state[:7])


def test_vlabench_ports_are_the_libero_simulators():
    from executors.libero.nodes.simulator import Simulator  # noqa: F401 - registers libero.Simulator
    from harness.canvas.registry import default_registry

    registry = default_registry()
    vla, libero = registry.get("manipulation.VLABenchSimulator"), registry.get("libero.Simulator")
    assert set(vla.inputs) == set(libero.inputs) == {"actions"}
    for port in ("images", "gripper", "instruction", "feedback"):
        assert vla.outputs[port].type == libero.outputs[port].type


def test_axis_angle_of_the_identity_and_a_half_turn():
    assert quat_to_axis_angle([0, 0, 0, 1]).tolist() == [0, 0, 0]
    np.testing.assert_allclose(quat_to_axis_angle([1, 0, 0, 0]), [np.pi, 0, 0])


def test_missing_vlabench_fails_with_what_to_install():
    sim = vlabench.VLABenchSimulator("sim", {})
    sim.setup()
    with pytest.raises(AdapterUnavailable, match="VLABench is not installed.*README"):
        sim.reset_episode({"level": "select_fruit", "seed": 0}, None)


def test_an_adapter_imported_first_does_not_hide_the_executors_other_node_types():
    """The VLABench adapter registers one manipulation.* type; the default registry
    must still import the executor's node modules for the others (a fresh process)."""
    import subprocess
    import sys

    code = ("import executors.manipulation.adapters.vlabench\n"
            "from harness.canvas.registry import default_registry\n"
            "print(default_registry().get('manipulation.Simulator') is not None)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"

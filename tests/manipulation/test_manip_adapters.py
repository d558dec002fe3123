"""VLABench and LIBERO adapters: conversions on arrays in the benchmarks' own
formats (neither benchmark's assets can be fetched here), and the import guard."""

from __future__ import annotations

import numpy as np
import pytest

from executors.manipulation.adapters import AdapterUnavailable, libero, vlabench
from executors.manipulation.openpi_format import quat_to_axis_angle

QUARTER_TURN_Z_XYZW = np.array([0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)])


def _frame(size: int) -> np.ndarray:
    frame = np.zeros((size, size, 3), np.uint8)
    frame[: size // 2] = 200  # top half bright
    frame[:, : size // 4, 1] = 90
    return frame


def test_libero_observation_matches_openpis_example():
    obs = {"agentview_image": _frame(256), "robot0_eye_in_hand_image": _frame(256),
           "robot0_eef_pos": np.array([-0.2, 0.01, 1.17]), "robot0_eef_quat": QUARTER_TURN_Z_XYZW,
           "robot0_gripper_qpos": np.array([0.039, -0.039])}
    request = libero.observation(obs, "put the bowl on the plate")
    image = request["observation/image"]
    assert image.shape == (224, 224, 3) and image.dtype == np.uint8
    assert image[-5].mean() > image[5].mean()  # rotated 180°: the bright top half is now at the bottom
    assert image[5, -5, 1] == 90 and image[5, 5, 1] == 0  # ... and left and right swapped
    state = request["observation/state"]
    assert state.dtype == np.float32 and state.shape == (8,)
    np.testing.assert_allclose(state, [-0.2, 0.01, 1.17, 0, 0, np.pi / 2, 0.039, -0.039], atol=1e-6)
    assert request["prompt"] == "put the bowl on the plate"
    assert libero.MAX_STEPS["libero_10"] == 520


def test_vlabench_state_image_and_action_conversions():
    ee_state = np.array([0.1, -0.2, 1.08, np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4), 0.04])  # quat w first
    obs = {"rgb": np.stack([_frame(480) * 0 + i for i in range(4)]).astype(np.uint8), "ee_state": ee_state,
           "instruction": "select the apple"}
    request = vlabench.observation(obs)
    assert request["observation/image"].shape == (224, 224, 3)
    assert request["observation/image"].max() == 2 and request["observation/wrist_image"].max() == 3  # front, wrist
    np.testing.assert_allclose(request["observation/state"], [0.1, 0.2, 0.3, 0, 0, np.pi / 2, 0.04], atol=1e-6)
    position, quat, fingers = vlabench.target_pose([0.1, 0.2, 0.3, 0, 0, np.pi / 2, 0.5])
    np.testing.assert_allclose(position, ee_state[:3])
    np.testing.assert_allclose(quat, ee_state[3:7], atol=1e-9)
    assert fingers.tolist() == [0.04, 0.04]
    assert vlabench.target_pose([0, 0, 0, 0, 0, 0, 0.05])[2].tolist() == [0.0, 0.0]


def test_axis_angle_of_the_identity_and_a_half_turn():
    assert quat_to_axis_angle([0, 0, 0, 1]).tolist() == [0, 0, 0]
    np.testing.assert_allclose(quat_to_axis_angle([1, 0, 0, 0]), [np.pi, 0, 0])


@pytest.mark.parametrize("node, package", [(libero.LiberoSimulator, "LIBERO"),
                                           (vlabench.VLABenchSimulator, "VLABench")])
def test_missing_benchmarks_fail_with_what_to_install(node, package):
    sim = node("sim", {})
    sim.setup()
    level = "libero_spatial/0" if package == "LIBERO" else "select_fruit"
    with pytest.raises(AdapterUnavailable, match=f"{package} is not installed.*README"):
        sim.reset_episode({"level": level, "seed": 0}, None)


def test_an_adapter_imported_first_does_not_hide_the_executors_other_node_types():
    """The LIBERO adapter registers one manipulation.* type; the default registry
    must still import the executor's node modules for the others (a fresh process)."""
    import subprocess
    import sys

    code = ("import executors.manipulation.adapters.libero\n"
            "from harness.canvas.registry import default_registry\n"
            "print(default_registry().get('manipulation.Simulator') is not None)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"

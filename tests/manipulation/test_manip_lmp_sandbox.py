"""The LMP sandbox: only the functions it is given, restricted Python, budgets."""

from __future__ import annotations

import numpy as np
import pytest

from harness.embodied import voxels
from harness.embodied.lmp import LMPError, extract_code, run_program


def test_a_program_sees_only_its_functions_and_returns_ret_val():
    calls = []
    functions = {"np": voxels.numpy_helpers(), "composer": lambda q: calls.append(q) or len(q)}
    assert run_program("n = composer('grasp the cube')\nret_val = n * 2\n", functions, "t") == 28
    assert calls == ["grasp the cube"]
    with pytest.raises(LMPError, match="NameError"):
        run_program("execute('gripper')\n", functions, "t")


@pytest.mark.parametrize("source, reason", [
    ("import os\n", "imports are not allowed"),
    ("ret_val = np.__class__\n", "_"),
    ("ret_val = open('/etc/passwd').read()\n", "'open' is not allowed"),
    ("while True:\n    pass\n", "while loops are not allowed"),
    ("ret_val = eval('1')\n", "'eval' is not allowed"),
])
def test_hostile_programs_are_rejected_before_running(source, reason):
    with pytest.raises(LMPError, match="rejected") as info:
        run_program(source, {"np": voxels.numpy_helpers()}, "t")
    assert reason in str(info.value)


def test_value_maps_may_be_written_but_shared_helpers_may_not():
    grid = voxels.Grid(10)
    functions = {"np": voxels.numpy_helpers(), "empty_map": grid.empty,
                 "ball": lambda p, r: grid.ball(p, r / 100.0)}
    value = run_program("ret_val = empty_map()\nret_val[ball(np.array([0.0, 0.0, 1.0]), 5)] = 1\n", functions, "t")
    assert value.shape == (10, 10, 10) and value.sum() >= 1
    assert np.allclose(grid.target_point(value), [0.0, 0.0, 1.0], atol=0.07)
    with pytest.raises(LMPError, match="may not write to a"):
        run_program("np.zeros = None\n", functions, "t")


def test_runaway_loops_hit_the_iteration_budget():
    with pytest.raises(LMPError, match="iterated more than"):
        run_program("for i in range(10**9):\n    pass\n", {}, "t")


def test_model_replies_yield_their_fenced_program():
    assert extract_code("Here you go:\n```python\ncomposer('x')\n```\nDone.") == "composer('x')\n"
    assert extract_code("composer('y')") == "composer('y')\n"

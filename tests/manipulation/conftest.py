"""Fixtures for the manipulation tests: real robosuite on MuJoCo, real openpi
websocket traffic, real SDK clients against loopback servers.

robosuite compiles its numba kernels the first time an environment is built in a
process (~20 s); environments are cached per process (executors.manipulation.envs),
so the whole session pays that once."""

from __future__ import annotations

import importlib.util

import pytest

if importlib.util.find_spec("robosuite") is None:  # robosuite itself is imported quietly by envs.make_env
    pytest.skip("the manipulation extra is not installed (pip install -e '.[manipulation]')", allow_module_level=True)

from executors.manipulation.stand_ins import lmp_server, planner_server  # noqa: E402

# openpi_client's own connect() call triggers a websockets deprecation warning
pytestmark = pytest.mark.filterwarnings("ignore:connect\\(\\) must be used:DeprecationWarning")


@pytest.fixture(scope="session")
def lmp_loopback():
    with lmp_server() as server:
        yield server


@pytest.fixture(scope="session")
def planner_loopback():
    with planner_server() as server:
        yield server

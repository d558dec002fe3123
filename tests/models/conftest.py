"""Fixtures for the models tests: loopback servers and profiles pointing at them."""

import pytest

from harness.models.loopback import LoopbackServer
from harness.models.profile import profile_from_dict


@pytest.fixture
def server():
    srv = LoopbackServer(lambda api, system, messages, body: f"echo:{api}").start()
    yield srv
    srv.stop()


@pytest.fixture
def make_profile(server):
    def build(backend="openai", **overrides):
        url = server.openai_url if backend == "openai" else server.anthropic_url
        data = {"backend": backend, "model": "test-model", "base_url": url, "backoff_base_s": 0.02,
                "max_retries": 3, "timeout": 5, "price_input_per_mtok": 2.0, "price_output_per_mtok": 10.0}
        data.update(overrides)
        return profile_from_dict(data, source="test-profile")
    return build

"""The real openai and anthropic SDK clients against loopback servers speaking their APIs."""

import threading

import numpy as np
import pytest

from harness.models import ModelCallError, make_client
from harness.models.images import image_part

BACKENDS = ["openai", "anthropic"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_text_usage_and_cost(server, make_profile, backend):
    client = make_client(make_profile(backend))
    reply = client.complete("where is the ball?", system="You plan.")
    assert reply.text == f"echo:{backend}"
    assert reply.model == "test-model"
    assert reply.input_tokens > 0 and reply.output_tokens > 0
    expected = (reply.input_tokens * 2.0 + reply.output_tokens * 10.0) / 1e6
    assert reply.cost_usd == pytest.approx(expected)
    assert reply.request_id == "req_loopback_1"
    body = server.requests[0]
    if backend == "openai":
        assert body["messages"][0] == {"role": "system", "content": "You plan."}
        assert body["max_tokens"] == 512
    else:
        assert body["system"][0]["text"] == "You plan."
        assert body["messages"] == [{"role": "user", "content": "where is the ball?"}]


@pytest.mark.parametrize("backend", BACKENDS)
def test_retries_429_then_500_then_success(server, make_profile, backend):
    events = []
    server.failures = [429, 500]
    client = make_client(make_profile(backend), on_retry=events.append)
    reply = client.complete("hi")
    assert reply.text == f"echo:{backend}"
    assert reply.attempts == 3
    assert len(server.requests) == 3
    assert [e["kind"] for e in events] == ["rate_limit", "server_error"]
    assert [e["status"] for e in events] == [429, 500]
    assert client.stats["retries"] == 2 and client.stats["failures"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_gives_up_after_max_retries_with_request_id(server, make_profile, backend):
    server.failures = [503, 503, 503]
    client = make_client(make_profile(backend, max_retries=2))
    with pytest.raises(ModelCallError) as info:
        client.complete("hi")
    assert info.value.kind == "server_error" and info.value.status == 503
    assert info.value.attempts == 3
    assert info.value.request_id == "req_loopback_3"
    assert "req_loopback_3" in str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_client_error_is_not_retried(server, make_profile, backend):
    server.failures = [400]
    client = make_client(make_profile(backend))
    with pytest.raises(ModelCallError) as info:
        client.complete("hi")
    assert info.value.status == 400 and info.value.attempts == 1
    assert len(server.requests) == 1


def test_retry_after_header_is_honoured(server, make_profile):
    events = []
    server.failures = [429]
    server.retry_after = 0.3
    make_client(make_profile("openai", backoff_base_s=10), on_retry=events.append).complete("hi")
    assert events[0]["sleep_s"] == pytest.approx(0.3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_slow_reply_times_out_with_client_request_id(server, make_profile, backend):
    server.delay_s = 1.5
    client = make_client(make_profile(backend, timeout=0.2, max_retries=1))
    with pytest.raises(ModelCallError) as info:
        client.complete("hi")
    assert info.value.kind == "timeout"
    assert info.value.attempts == 2
    assert info.value.request_id.startswith("architect-")
    sent = {h.get("x-client-request-id") or h.get("X-Client-Request-Id") for h in server.headers}
    assert info.value.request_id in sent


@pytest.mark.parametrize("backend", BACKENDS)
def test_concurrency_limit_is_respected(server, make_profile, backend):
    server.delay_s = 0.15
    client = make_client(make_profile(backend, concurrency=3))
    errors = []

    def call(i):
        try:
            client.complete(f"request {i}")
        except Exception as exc:  # surfaced through the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(server.requests) == 12
    assert server.max_concurrent == 3
    assert client.stats["max_in_flight"] == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_images_reach_the_server_in_the_api_shape(server, make_profile, backend):
    pixels = np.zeros((4, 4, 3), np.uint8)
    part = image_part(pixels)
    make_client(make_profile(backend)).complete([{"role": "user", "content": [part, {"type": "text", "text": "what?"}]}])
    content = server.requests[0]["messages"][-1]["content"]
    if backend == "openai":
        assert content[0]["type"] == "image_url"
        assert content[0]["image_url"]["url"] == "data:image/png;base64," + part["data"]
    else:
        assert content[0] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": part["data"]}}
    assert content[1]["text"] == "what?"


SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}


@pytest.mark.parametrize("mode,field", [("vllm", "structured_outputs"), ("response_format", "response_format"),
                                        ("prompt", None)])
def test_openai_structured_output_modes(server, make_profile, mode, field):
    make_client(make_profile("openai", structured_output=mode)).complete("json please", json_schema=SCHEMA)
    body = server.requests[0]
    if mode == "vllm":
        assert body["structured_outputs"] == {"json": SCHEMA}
        assert "response_format" not in body
    elif mode == "response_format":
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    else:
        assert "structured_outputs" not in body and "response_format" not in body


def test_anthropic_structured_output_and_prompt_caching(server, make_profile):
    client = make_client(make_profile("anthropic"))
    client.complete("json please", system="short", json_schema=SCHEMA)
    client.complete("again", system="long guidance. " * 400)
    first, second = server.requests
    assert first["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert "cache_control" not in first["system"][0]
    assert second["system"][0]["cache_control"] == {"type": "ephemeral"}
    no_cache = make_client(make_profile("anthropic", prompt_caching=False))
    no_cache.complete("again", system="long guidance. " * 400)
    assert "cache_control" not in server.requests[2]["system"][0]


def test_api_key_comes_from_the_named_environment_variable(server, make_profile, monkeypatch):
    monkeypatch.setenv("MY_TEST_KEY", "sk-secret-123")
    make_client(make_profile("openai", api_key_env="MY_TEST_KEY")).complete("hi")
    assert server.headers[0].get("authorization") == "Bearer sk-secret-123"


def test_prompt_cache_tokens_are_counted_and_priced(server, make_profile):
    server.usage_extra = {"cache_read_input_tokens": 1000, "cache_creation_input_tokens": 200}
    reply = make_client(make_profile("anthropic")).complete("hi", system="long guidance. " * 400)
    plain = reply.input_tokens - 1200
    assert plain > 0 and reply.cache_read_tokens == 1000 and reply.cache_write_tokens == 200
    # input 2.0 $/Mtok: cache reads at 0.1x, cache writes at 1.25x
    assert reply.cost_usd == pytest.approx((plain * 2.0 + 1000 * 0.2 + 200 * 2.5 + reply.output_tokens * 10.0) / 1e6)
    server.usage_extra = {"prompt_tokens_details": {"cached_tokens": 3}}
    reply = make_client(make_profile("openai", price_cache_read_per_mtok=1.0)).complete("hello there, model")
    assert reply.cache_read_tokens == 3
    assert reply.cost_usd == pytest.approx(((reply.input_tokens - 3) * 2.0 + 3 * 1.0 + reply.output_tokens * 10.0) / 1e6)

"""Anthropic Messages API through the official `anthropic` SDK."""

from __future__ import annotations

import anthropic

from harness.models.errors import Failure, classify
from harness.models.profile import InferenceProfile
from harness.models.request import BackendResult, ModelRequest

# Below roughly this many characters a system prompt is under the smallest
# cacheable prefix, so marking it would only add a cache-write surcharge attempt.
CACHE_MIN_SYSTEM_CHARS = 4096


def _content(content):
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if part["type"] == "text":
            parts.append({"type": "text", "text": part["text"]})
        else:
            parts.append({"type": "image", "source": {"type": "base64", "media_type": part["media_type"],
                                                      "data": part["data"]}})
    return parts


class AnthropicBackend:
    name = "anthropic"

    def __init__(self, profile: InferenceProfile):
        self.profile = profile
        # Retries are ours (client.py) so that every attempt is observable.
        self.client = anthropic.Anthropic(api_key=profile.api_key() or "missing-api-key",
                                          base_url=profile.base_url, max_retries=0,
                                          timeout=profile.timeout)

    def build_params(self, request: ModelRequest) -> dict:
        # The installed SDK's Messages API takes no sampling temperature; it still
        # belongs to the request (and its hash), it is just not sent.
        params = {"model": request.model, "max_tokens": request.max_tokens,
                  "messages": [{"role": m["role"], "content": _content(m["content"])} for m in request.messages]}
        if request.system:
            block = {"type": "text", "text": request.system}
            if self.profile.prompt_caching and len(request.system) >= CACHE_MIN_SYSTEM_CHARS:
                block["cache_control"] = {"type": "ephemeral"}
            params["system"] = [block]
        if request.json_schema is not None and self.profile.structured_output in ("auto", "output_config"):
            params["output_config"] = {"format": {"type": "json_schema", "schema": request.json_schema}}
        return params

    def send(self, request: ModelRequest, *, timeout: float, client_request_id: str) -> BackendResult:
        message = self.client.messages.create(**self.build_params(request), timeout=timeout,
                                              extra_headers={"x-client-request-id": client_request_id})
        text = "".join(block.text for block in message.content if getattr(block, "type", None) == "text")
        usage = message.usage
        cache_read = usage.cache_read_input_tokens or 0
        cache_write = usage.cache_creation_input_tokens or 0
        return BackendResult(text=text, model=message.model,
                             input_tokens=usage.input_tokens + cache_read + cache_write,
                             output_tokens=usage.output_tokens,
                             request_id=getattr(message, "_request_id", None) or message.id,
                             cache_read_tokens=cache_read, cache_write_tokens=cache_write)

    def classify(self, exc: BaseException) -> Failure:
        return classify(exc, anthropic)

    def close(self) -> None:
        self.client.close()

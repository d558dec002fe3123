"""OpenAI-compatible chat completions (vLLM, SGLang, Ollama, hosted) through the `openai` client."""

from __future__ import annotations

import openai

from harness.models.errors import Failure, classify
from harness.models.profile import InferenceProfile
from harness.models.request import BackendResult, ModelRequest


def _content(content):
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if part["type"] == "text":
            parts.append({"type": "text", "text": part["text"]})
        else:
            url = f"data:{part['media_type']};base64,{part['data']}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


class OpenAIBackend:
    name = "openai"

    def __init__(self, profile: InferenceProfile):
        self.profile = profile
        # Local servers (vLLM, Ollama) accept any key; the SDK insists on one.
        key = profile.api_key() or ("EMPTY" if profile.base_url else None)
        self.client = openai.OpenAI(api_key=key or "missing-api-key", base_url=profile.base_url,
                                    max_retries=0, timeout=profile.timeout)

    def build_params(self, request: ModelRequest) -> dict:
        messages = [{"role": "system", "content": request.system}] if request.system else []
        messages += [{"role": m["role"], "content": _content(m["content"])} for m in request.messages]
        # api.openai.com's newer models reject max_tokens; local servers know max_tokens best.
        hosted = not self.profile.base_url or "api.openai.com" in self.profile.base_url
        params = {"model": request.model, "messages": messages, "temperature": request.temperature,
                  ("max_completion_tokens" if hosted else "max_tokens"): request.max_tokens}
        if request.json_schema is not None:
            mode = self.profile.structured_output
            if mode == "vllm":
                params["extra_body"] = {"structured_outputs": {"json": request.json_schema}}
            elif mode in ("auto", "response_format"):
                params["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": "output", "schema": request.json_schema}}
        return params

    def send(self, request: ModelRequest, *, timeout: float, client_request_id: str) -> BackendResult:
        completion = self.client.chat.completions.create(
            **self.build_params(request), timeout=timeout,
            extra_headers={"X-Client-Request-Id": client_request_id})
        if not completion.choices:
            raise ValueError("server returned no choices")
        usage = completion.usage
        cached = 0
        if usage is not None and usage.prompt_tokens_details is not None:
            cached = usage.prompt_tokens_details.cached_tokens or 0
        return BackendResult(text=completion.choices[0].message.content or "", model=completion.model,
                             input_tokens=usage.prompt_tokens if usage else 0,
                             output_tokens=usage.completion_tokens if usage else 0,
                             request_id=getattr(completion, "_request_id", None) or completion.id,
                             cache_read_tokens=cached)

    def classify(self, exc: BaseException) -> Failure:
        return classify(exc, openai)

    def close(self) -> None:
        self.client.close()

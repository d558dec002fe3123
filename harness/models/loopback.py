"""A loopback HTTP server speaking the OpenAI `/v1/chat/completions` and Anthropic
`/v1/messages` JSON shapes, answering with a Python function.

The base of every model stand-in (the executors' scripted planners, SHAPER's
scripted models) and of the tests' model servers: the real SDK clients talk to
it exactly as they would to vLLM or the Anthropic API. It is not a model; what
answers is whatever `answer` computes. It imports nothing of the harness.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

# answer(api, system, messages, body) -> text;  api is "openai" or "anthropic";
# messages are the wire messages with the system prompt split out.
Answer = Callable[[str, str | None, list, dict], str]


def text_of(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class LoopbackServer:
    def __init__(self, answer: Answer | None = None, *, delay_s: float = 0.0,
                 failures: list[int] | None = None, retry_after: float | None = None,
                 reply_model: str | None = None, usage_extra: dict | None = None):
        self.usage_extra = usage_extra or {}       # merged into every response's "usage" (e.g. cache tokens)
        self.reply_model = reply_model             # model name put in responses (default: the one asked for)
        self.answer = answer or (lambda api, system, messages, body: "ok")
        self.delay_s = delay_s
        self.failures = list(failures or [])      # status codes returned, in order, before answering
        self.retry_after = retry_after
        self.requests: list[dict] = []             # every request body received, failures included
        self.headers: list[dict] = []
        self.max_concurrent = 0
        self._concurrent = 0
        self._lock = threading.Lock()
        self._counter = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "LoopbackServer":
        # stop() waits for the serving loop's next poll (every 0.5 s by default)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "LoopbackServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _reply(self, path: str, body: dict) -> tuple[int, dict, dict]:
        with self._lock:
            self._counter += 1
            number = self._counter
            status = self.failures.pop(0) if self.failures else 200
        request_id = f"req_loopback_{number}"
        headers = {"request-id": request_id, "x-request-id": request_id}
        if status != 200:
            if self.retry_after is not None:
                headers["retry-after"] = str(self.retry_after)
            kind = "rate_limit_error" if status == 429 else "api_error"
            return status, headers, {"type": "error", "error": {"type": kind, "message": f"scripted {status}"}}
        if path.endswith("/messages"):
            system = body.get("system")
            if isinstance(system, list):
                system = text_of(system)
            text = self.answer("anthropic", system, body.get("messages", []), body)
            prompt = (system or "") + "".join(text_of(m.get("content", "")) for m in body.get("messages", []))
            return 200, headers, {
                "id": f"msg_{number}", "type": "message", "role": "assistant",
                "model": self.reply_model or body.get("model", ""),
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": _tokens(prompt), "output_tokens": _tokens(text), **self.usage_extra}}
        messages = body.get("messages", [])
        system = next((text_of(m["content"]) for m in messages if m.get("role") == "system"), None)
        rest = [m for m in messages if m.get("role") != "system"]
        text = self.answer("openai", system, rest, body)
        prompt = "".join(text_of(m.get("content", "")) for m in messages)
        return 200, headers, {
            "id": f"chatcmpl-{number}", "object": "chat.completion", "created": int(time.time()),
            "model": self.reply_model or body.get("model", ""),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": _tokens(prompt), "completion_tokens": _tokens(text),
                      "total_tokens": _tokens(prompt) + _tokens(text), **self.usage_extra}}

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # The headers and the body go out in two writes; with Nagle's algorithm the body
            # waits for the client's delayed ACK of the headers (~40 ms on every answer). Real
            # model servers (uvicorn, vLLM) set TCP_NODELAY too.
            disable_nagle_algorithm = True

            def do_POST(self):  # noqa: N802 (http.server naming)
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    server._concurrent += 1
                    server.max_concurrent = max(server.max_concurrent, server._concurrent)
                try:
                    if server.delay_s:
                        time.sleep(server.delay_s)
                    status, headers, payload = server._reply(self.path, body)
                finally:
                    with server._lock:
                        server._concurrent -= 1
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and went away

            def log_message(self, *args):
                pass

        return Handler

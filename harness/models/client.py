"""`ModelClient`: one profile's model calls with retries, timeouts, a concurrency cap,
cost accounting and optional record / replay.

Modes: `live` (network only), `record` (serve from the cassette when the request is
already there, else call the network and append the pair), `replay` (cassette only).
`ARCHITECT_MODEL_MODE` and `ARCHITECT_CASSETTE` override the mode and cassette of
clients built without explicit ones, so an evaluation can be re-run offline.
`ARCHITECT_MODEL_BASE_URL` points every openai-backend profile at that server
instead of its own `base_url` (e.g. the loopback server of scripted stand-ins
that `architect loop shaper --scripted-models` starts); it is part of the result
cache key.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from harness.models.cassette import Cassette
from harness.models.profile import (DEFAULT_KEY_ENV, InferenceProfile, ProfileError, load_profile,
                                    resolve_profile_path)
from harness.models.request import (BackendResult, ModelCallError, ModelRequest, ModelResponse,
                                    normalise_messages)

log = logging.getLogger("harness.models")
MODES = ("live", "record", "replay")


# The module of each live backend (its SDK is most of a worker's imports: evaluation
# workers preload it, see harness.evaluation.evaluator).
BACKEND_MODULES = {"anthropic": "harness.models.anthropic_backend", "openai": "harness.models.openai_backend"}


def _make_backend(profile: InferenceProfile):
    if profile.backend == "anthropic":
        from harness.models.anthropic_backend import AnthropicBackend
        return AnthropicBackend(profile)
    if profile.backend == "openai":
        from harness.models.openai_backend import OpenAIBackend
        return OpenAIBackend(profile)
    return None


class ModelClient:
    def __init__(self, profile: InferenceProfile, *, mode: str = "live", cassette: Cassette | None = None,
                 backend=None, on_retry: Callable[[dict], None] | None = None):
        self.profile = profile
        self.mode = mode
        self.cassette = cassette
        self.backend = backend
        self.on_retry = on_retry
        self._slots = threading.BoundedSemaphore(profile.concurrency)
        self._stats_lock = threading.Lock()
        self._rng = random.Random()
        self.stats = {"calls": 0, "attempts": 0, "retries": 0, "failures": 0, "replayed": 0,
                      "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "in_flight": 0, "max_in_flight": 0}

    @property
    def model(self) -> str:
        return self.profile.model

    def _bump(self, **deltas: Any) -> None:
        with self._stats_lock:
            for key, value in deltas.items():
                self.stats[key] += value
            self.stats["max_in_flight"] = max(self.stats["max_in_flight"], self.stats["in_flight"])

    def build_request(self, messages, *, system=None, max_tokens=None, temperature=None,
                      json_schema=None) -> ModelRequest:
        return ModelRequest(model=self.profile.model, messages=normalise_messages(messages), system=system,
                            max_tokens=int(max_tokens if max_tokens is not None else self.profile.max_tokens),
                            temperature=float(temperature if temperature is not None else self.profile.temperature),
                            json_schema=json_schema)

    def complete(self, messages, *, system: str | None = None, max_tokens: int | None = None,
                 temperature: float | None = None, json_schema: dict | None = None) -> ModelResponse:
        """One model call. Raises ModelCallError (with the request id) once retries are exhausted."""
        request = self.build_request(messages, system=system, max_tokens=max_tokens,
                                     temperature=temperature, json_schema=json_schema)
        started = time.monotonic()
        if self.cassette is not None and (self.mode == "replay" or request.key() in self.cassette):
            result = self.cassette.lookup(request)
            return self._respond(result, time.monotonic() - started, attempts=0, replayed=True)
        if self.mode == "replay" or self.backend is None:
            raise ModelCallError("replay mode needs a cassette (profile key 'cassette' or ARCHITECT_CASSETTE)",
                                 kind="cassette_miss")
        result, attempts = self._call_live(request)
        latency = time.monotonic() - started
        if self.mode == "record" and self.cassette is not None:
            self.cassette.record(request, result, backend=self.backend.name, latency_s=latency,
                                 note=f"recorded live from {self.profile.base_url or self.backend.name}")
        return self._respond(result, latency, attempts=attempts, replayed=False)

    def _respond(self, result: BackendResult, latency: float, *, attempts: int, replayed: bool) -> ModelResponse:
        cost = self.profile.cost_usd(result.input_tokens, result.output_tokens,
                                     result.cache_read_tokens, result.cache_write_tokens)
        self._bump(calls=1, replayed=int(replayed), input_tokens=result.input_tokens,
                   output_tokens=result.output_tokens, cost_usd=cost)
        return ModelResponse(text=result.text, model=result.model, input_tokens=result.input_tokens,
                             output_tokens=result.output_tokens, cost_usd=cost, latency_s=latency,
                             request_id=result.request_id, attempts=attempts, replayed=replayed,
                             cache_read_tokens=result.cache_read_tokens,
                             cache_write_tokens=result.cache_write_tokens)

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.profile.backoff_max_s)
        ceiling = min(self.profile.backoff_max_s, self.profile.backoff_base_s * (2 ** retry))
        return self._rng.uniform(0, ceiling)

    def _call_live(self, request: ModelRequest) -> tuple[BackendResult, int]:
        client_request_id = f"architect-{uuid.uuid4().hex[:16]}"
        attempt = 0
        with self._slots:
            self._bump(in_flight=1)
            try:
                while True:
                    attempt += 1
                    self._bump(attempts=1)
                    try:
                        return self.backend.send(request, timeout=self.profile.timeout,
                                                 client_request_id=client_request_id), attempt
                    except Exception as exc:  # classified below; unknown errors are not retried
                        failure = self.backend.classify(exc)
                        request_id = failure.request_id or client_request_id
                        if not failure.retryable or attempt > self.profile.max_retries:
                            self._bump(failures=1)
                            raise ModelCallError(
                                f"{self.backend.name} call to model {request.model!r} failed after "
                                f"{attempt} attempt(s): {failure.kind}: {failure.detail}",
                                request_id=request_id, kind=failure.kind, status=failure.status,
                                attempts=attempt) from exc
                        delay = self._backoff(attempt - 1, failure.retry_after)
                        event = {"attempt": attempt, "kind": failure.kind, "status": failure.status,
                                 "request_id": request_id, "sleep_s": round(delay, 3)}
                        log.warning("model call retry %s", event)
                        self._bump(retries=1)
                        if self.on_retry is not None:
                            self.on_retry(event)
                        time.sleep(delay)
            finally:
                self._bump(in_flight=-1)

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()


def effective_setup(profile: InferenceProfile, mode: str | None = None, cassette=None):
    """The (mode, cassette) a client for `profile` uses: `ARCHITECT_MODEL_MODE`
    when set (an operator's override), else `mode`, else live; backend
    `replay` always replays. The cassette: the one given, else
    `ARCHITECT_CASSETTE`, else the profile's."""
    mode = os.environ.get("ARCHITECT_MODEL_MODE") or mode or "live"
    if mode not in MODES:
        raise ProfileError(f"model mode must be one of {', '.join(MODES)}, got {mode!r}")
    if profile.backend == "replay":
        if mode == "record":
            raise ProfileError(f"profile {profile.name!r} has backend 'replay': it cannot record")
        mode = "replay"
    if cassette is None:
        cassette = os.environ.get("ARCHITECT_CASSETTE") or profile.cassette_path()
    return mode, cassette


BASE_URL_ENV = "ARCHITECT_MODEL_BASE_URL"


def with_base_url_override(profile: InferenceProfile) -> InferenceProfile:
    """The profile with `$ARCHITECT_MODEL_BASE_URL` as its base_url (openai backend only)."""
    override = os.environ.get(BASE_URL_ENV)
    if override and profile.backend == "openai":
        import dataclasses

        return dataclasses.replace(profile, base_url=override)
    return profile


def checked_setup(profile: InferenceProfile, mode: str | None = None, cassette=None):
    """(profile, mode, cassette) a client would be built from, refused with a ProfileError
    naming what is missing (a cassette to replay or record, an API key) — without importing
    the backend's SDK."""
    profile = with_base_url_override(profile)
    mode, cassette = effective_setup(profile, mode, cassette)
    if mode in ("record", "replay") and cassette is None:
        raise ProfileError(f"mode {mode!r} needs a cassette: set the profile key 'cassette', "
                           "pass one, or set ARCHITECT_CASSETTE")
    if mode == "replay" and not isinstance(cassette, Cassette) and not Path(cassette).is_file():
        raise ProfileError(f"cassette not found: {cassette}")
    if mode != "replay" and not profile.base_url and profile.api_key() is None:
        env = profile.api_key_env or DEFAULT_KEY_ENV[profile.backend]
        raise ProfileError(f"profile {profile.name!r} calls the hosted {profile.backend} API but ${env} "
                           "is not set (export it, or set api_key_env / base_url in the profile)")
    return profile, mode, cassette


def make_client(profile: InferenceProfile, mode: str | None = None, cassette: str | Path | Cassette | None = None,
                *, on_retry: Callable[[dict], None] | None = None) -> ModelClient:
    """Build the client for a profile (mode and cassette as `effective_setup` resolves them)."""
    profile, mode, cassette = checked_setup(profile, mode, cassette)
    if cassette is not None and not isinstance(cassette, Cassette):
        cassette = Cassette(cassette)
    backend = None if mode == "replay" else _make_backend(profile)
    return ModelClient(profile, mode=mode, cassette=cassette if mode != "live" else None,
                       backend=backend, on_retry=on_retry)


def check_graph_setup(graph: dict, candidate_dir=None) -> None:
    """Refuse what `client_for_graph` would refuse (the profile, its mode, cassette and
    API key), the same way, without building the backend (importing its SDK)."""
    pinned = graph.get("model_profile")
    if not pinned:
        return
    _, _, cassette = checked_setup(load_profile(resolve_profile_path(pinned["path"], candidate_dir)))
    if cassette is not None and not isinstance(cassette, Cassette):
        Cassette(cassette)  # reading it checks it


def client_for_graph(graph: dict, candidate_dir=None, mode: str | None = None, cassette=None,
                     concurrency: int | None = None):
    """The client for a graph's pinned `model_profile`, or None when it pins none;
    `concurrency` overrides the profile's cap (a share of it per Ray actor)."""
    pinned = graph.get("model_profile")
    if not pinned:
        return None
    profile = load_profile(resolve_profile_path(pinned["path"], candidate_dir))
    if concurrency is not None:
        import dataclasses

        profile = dataclasses.replace(profile, concurrency=concurrency)
    return make_client(profile, mode, cassette)


def model_fingerprint(graph: dict, candidate_dir=None) -> str:
    """What, besides the candidate's files, decides a model graph's answers: the
    pinned profile's content, the effective mode and (when replaying) the
    cassette's content. "" for a graph that pins no profile. Part of the
    result-cache key, so a replayed result is never served to a live run."""
    import hashlib

    pinned = graph.get("model_profile")
    if not pinned:
        return ""
    path = resolve_profile_path(pinned["path"], candidate_dir)
    mode, cassette = effective_setup(load_profile(path))
    h = hashlib.sha256(path.read_bytes() + mode.encode())
    h.update(os.environ.get(BASE_URL_ENV, "").encode())
    if mode == "replay" and cassette is not None and Path(cassette).is_file():
        h.update(Path(cassette).read_bytes())
    return h.hexdigest()

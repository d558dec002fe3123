"""Turn SDK exceptions (anthropic and openai share their shape) into retry decisions."""

from __future__ import annotations

from dataclasses import dataclass

RETRYABLE_STATUS = {408, 409, 429}


@dataclass
class Failure:
    retryable: bool
    kind: str                 # "rate_limit", "server_error", "timeout", "connection", "client_error", "error"
    status: int | None
    request_id: str | None
    retry_after: float | None
    detail: str


def classify(exc: BaseException, sdk) -> Failure:
    """`sdk` is the `anthropic` or `openai` module; both name their errors alike."""
    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, sdk.APITimeoutError):
        return Failure(True, "timeout", None, None, None, detail)
    if isinstance(exc, sdk.APIConnectionError):
        return Failure(True, "connection", None, None, None, detail)
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        retry_after = None
        try:
            header = exc.response.headers.get("retry-after")
            retry_after = float(header) if header is not None else None
        except (TypeError, ValueError):
            retry_after = None
        if status == 429:
            kind = "rate_limit"
        elif status >= 500:
            kind = "server_error"
        else:
            kind = "client_error"
        retryable = status in RETRYABLE_STATUS or status >= 500
        return Failure(retryable, kind, status, getattr(exc, "request_id", None), retry_after, detail)
    return Failure(False, "error", None, None, None, detail)

"""Inference profiles: YAML files saying how model-calling nodes reach their model.

A graph pins one profile (`model_profile: {"name", "path"}`); every model node
of that graph calls the model through a client built from it.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.confine import confined_file, profile_places
from harness.errors import InferenceProfileError
from harness.fileio import read_yaml
from harness.schemas import iter_schema_errors, load_schema

SCHEMA_NAME = "inference_profile"
DEFAULT_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


ProfileError = InferenceProfileError  # this module's name for it


@dataclass(frozen=True)
class InferenceProfile:
    backend: str
    model: str
    name: str = "profile"
    temperature: float = 0.0
    max_tokens: int = 512
    price_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    price_cache_read_per_mtok: float | None = None
    price_cache_write_per_mtok: float | None = None
    concurrency: int = 8
    timeout: float = 60.0
    max_retries: int = 4
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0
    base_url: str | None = None
    api_key_env: str | None = None
    structured_output: str = "auto"
    prompt_caching: bool = True
    cassette: str | None = None
    # where the profile was read from; relative paths (cassette) resolve against it
    source: str | None = field(default=None, compare=False)

    def cost_usd(self, input_tokens: int, output_tokens: int,
                 cache_read_tokens: int = 0, cache_write_tokens: int = 0) -> float:
        """Price of one call. `input_tokens` includes the cached ones."""
        read_price = (self.price_cache_read_per_mtok if self.price_cache_read_per_mtok is not None
                      else 0.1 * self.price_input_per_mtok)
        write_price = (self.price_cache_write_per_mtok if self.price_cache_write_per_mtok is not None
                       else 1.25 * self.price_input_per_mtok)
        plain = max(0, input_tokens - cache_read_tokens - cache_write_tokens)
        return (plain * self.price_input_per_mtok + cache_read_tokens * read_price
                + cache_write_tokens * write_price + output_tokens * self.price_output_per_mtok) / 1e6

    def api_key(self) -> str | None:
        """The key from the environment variable the profile names (None if unset)."""
        env = self.api_key_env or DEFAULT_KEY_ENV.get(self.backend)
        return os.environ.get(env) if env else None

    def cassette_path(self) -> Path | None:
        if not self.cassette:
            return None
        path = Path(self.cassette)
        if not path.is_absolute() and self.source:
            path = Path(self.source).parent / path
        return path

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.pop("source")
        return {k: v for k, v in data.items() if v is not None}


def profile_from_dict(data: Any, *, source: str = "<profile>", name: str | None = None) -> InferenceProfile:
    """Validate a parsed profile; every bad key is named in one ProfileError."""
    if not isinstance(data, dict):
        raise ProfileError(f"{source}: an inference profile must be a YAML mapping, got {type(data).__name__}")
    problems = [f"{pointer.lstrip('/') or '(top level)'}: {message}"
                for pointer, message in iter_schema_errors(SCHEMA_NAME, data)]
    if data.get("backend") == "anthropic" and data.get("structured_output") in ("response_format", "vllm"):
        problems.append(f"structured_output: {data['structured_output']!r} needs backend openai")
    if data.get("backend") == "openai" and data.get("structured_output") == "output_config":
        problems.append("structured_output: 'output_config' needs backend anthropic")
    if problems:
        raise ProfileError(f"{source}: bad inference profile: " + "; ".join(problems),
                           details={"path": source, "problems": problems})
    known = load_schema(SCHEMA_NAME)["properties"]
    values = {k: data[k] for k in known if k in data}
    values.setdefault("name", name or "profile")
    return InferenceProfile(**values, source=source)


def resolve_profile_path(path: str | os.PathLike, candidate_dir: str | os.PathLike | None = None) -> Path:
    """A graph's `model_profile.path`: a file inside the candidate folder, or
    (relative to the project root) inside the project's profiles/ folder.

    With a candidate folder the path is confined to those two places (a
    ProfileError otherwise); without one (a graph used directly from code) an
    absolute path is taken as it is."""
    found = confined_file(path, profile_places(candidate_dir))
    if found is not None:
        return found
    if candidate_dir is None and Path(path).is_absolute():
        return Path(path)
    raise ProfileError(f"model_profile.path {str(path)[:200]!r}: no such file inside the candidate folder or "
                       f"the project's profiles/ folder (paths may not leave them)")


def load_profile(path: str | os.PathLike) -> InferenceProfile:
    """Read and validate a YAML inference profile."""
    path = Path(path)
    data = read_yaml(path, "inference profile", ProfileError)
    return profile_from_dict(data, source=str(path), name=path.stem)

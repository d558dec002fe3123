"""Model backends, inference profiles, record/replay and LLM node types.

    profile = load_profile("profiles/vllm-qwen.yaml")
    client = make_client(profile)                      # or mode="record"/"replay", cassette=...
    reply = client.complete("Where is the red ball?", system="You plan.")
"""

import os
from pathlib import Path

from harness.models.client import BASE_URL_ENV, ModelClient, effective_setup, make_client
from harness.models.profile import InferenceProfile, ProfileError, load_profile, resolve_profile_path
from harness.models.request import CassetteMiss, ModelCallError, ModelResponse

__all__ = ["CassetteMiss", "InferenceProfile", "ModelCallError", "ModelClient", "ModelResponse",
           "ProfileError", "client_for_graph", "load_profile", "make_client", "resolve_profile_path"]


def client_for_graph(graph: dict, candidate_dir=None, mode: str | None = None, cassette=None):
    """The client for a graph's pinned `model_profile`, or None when it pins none."""
    pinned = graph.get("model_profile")
    if not pinned:
        return None
    return make_client(load_profile(resolve_profile_path(pinned["path"], candidate_dir)), mode, cassette)


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


def register_node_types(registry=None) -> None:
    """Register the `llm.*` node types (into the default registry unless one is given)."""
    from harness.models import nodes
    from harness.canvas.registry import default_registry

    nodes.register_into(registry or default_registry())


# Importing harness.models makes `llm.*` resolvable in the default registry.
register_node_types()

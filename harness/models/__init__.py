"""Model backends, inference profiles, record/replay and LLM node types.

    profile = load_profile("profiles/vllm-qwen.yaml")
    client = make_client(profile)                      # or mode="record"/"replay", cassette=...
    reply = client.complete("Where is the red ball?", system="You plan.")

This package is light to import: it declares the `llm.*` node namespace
(`NODE_NAMESPACE`, published under the `architect.node_namespaces` entry
point; the registry imports `harness.models.nodes` on the first `llm.*`
lookup) and loads the names below from their modules on first use.
"""

import importlib

from harness.plugins import NodeNamespace

NODE_NAMESPACE = NodeNamespace(name="llm", node_modules=("harness.models.nodes",),
                               doc="model-calling node types: chat, structured output, image description, "
                                   "context harness, round history")

_EXPORTS = {
    "harness.models.client": ("BASE_URL_ENV", "ModelClient", "check_graph_setup", "client_for_graph",
                              "effective_setup", "make_client", "model_fingerprint"),
    "harness.models.profile": ("InferenceProfile", "ProfileError", "load_profile", "resolve_profile_path"),
    "harness.models.request": ("CassetteMiss", "ModelCallError", "ModelResponse"),
}
_HOME = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_HOME)


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module 'harness.models' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value
    return value

"""Seed copies whose pinned model profile points at a loopback server (the manipulation
and LIBERO tests use it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness import SEEDS_DIR


def candidate_on_loopback(name: str, base_url: str, folder: Path) -> Path:
    """A copy of seed `name` whose pinned profile (same name) points at a loopback server."""
    target = folder / name
    shutil.copytree(SEEDS_DIR / name, target)
    graph = json.loads((target / "graph.json").read_text())
    (target / "loopback.yaml").write_text(f"backend: openai\nmodel: scripted\nbase_url: {base_url}\n"
                                          "temperature: 0\nmax_tokens: 512\nconcurrency: 4\n")
    graph["model_profile"] = {"name": graph["model_profile"]["name"], "path": "loopback.yaml"}
    (target / "graph.json").write_text(json.dumps(graph, indent=2))
    return target

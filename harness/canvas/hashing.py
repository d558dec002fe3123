"""Canonical hashes: the same graph (or candidate) always hashes the same,
whatever its key order or whitespace."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness.canvas.graph import GRAPH_FILE, read_json_file

_SKIP_DIRS = {"__pycache__", ".git", ".pytest_cache"}


def canonical_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def graph_hash(graph: dict) -> str:
    """sha256 hex of the canonical JSON (sorted keys, no whitespace)."""
    return hashlib.sha256(canonical_json(graph).encode("utf-8")).hexdigest()


def candidate_hash(candidate_dir: str | Path) -> str:
    """Hash of a candidate folder: the graph canonically, every other file by
    content (prompts, skills, nodeset/...), so result caching is exact."""
    root = Path(candidate_dir)
    h = hashlib.sha256()
    graph_path = root / GRAPH_FILE
    if graph_path.is_file():
        h.update(b"graph\0" + graph_hash(read_json_file(graph_path)).encode() + b"\0")
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        if rel == Path(GRAPH_FILE) or _SKIP_DIRS.intersection(rel.parts) or path.suffix == ".pyc":
            continue
        h.update(b"file\0" + rel.as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()

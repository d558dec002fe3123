"""The edit whitelist: which candidate files a proposer may change, add or remove."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

IGNORED_PARTS = {"__pycache__", ".pytest_cache"}


def candidate_files(folder: Path) -> dict[str, bytes]:
    """Relative POSIX path -> content of every file of a candidate folder."""
    files = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not IGNORED_PARTS.intersection(rel.parts) and path.suffix != ".pyc":
            files[rel.as_posix()] = path.read_bytes()
    return files


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def allowed(path: str, patterns: list[str]) -> bool:
    """`*` stays inside one folder, `**` crosses folders (`nodeset/**`, `**/*.md`)."""
    return any(_glob_regex(p).match(path) for p in patterns)


def changes(parent: dict[str, bytes], child: dict[str, bytes]) -> list[tuple[str, str]]:
    """(kind, path) for every file added, removed or changed from parent to child."""
    out = [("removed", p) for p in parent if p not in child]
    out += [("added", p) for p in child if p not in parent]
    out += [("changed", p) for p in child if p in parent and parent[p] != child[p]]
    return sorted(out, key=lambda kc: kc[1])


def violations(parent: dict[str, bytes], child: dict[str, bytes], patterns: list[str]) -> list[dict]:
    return [
        {
            "code": "whitelist",
            "path": path,
            "message": f"{path}: {kind}, but the executor profile does not allow editing it",
            "hint": "allowed patterns: " + ", ".join(patterns) if patterns else "the profile allows no edits",
        }
        for kind, path in changes(parent, child)
        if not allowed(path, patterns)
    ]

"""The installed plug-ins' entry points, remembered between processes.

Every `architect` command finds its executors and variants through entry
points. Asking `importlib.metadata` imports the email package and reads the
metadata of every installed distribution: a noticeable share of a short
command's start-up. So the answer is kept in `cache_home()/entry-points.json`
under a signature of what it was read from: each `sys.path` folder and the
modification time of every `*.dist-info` / `*.egg-info` `entry_points.txt` in
it. Installing, removing or reinstalling a distribution, editing its
entry_points.txt or changing `sys.path` changes the signature, and the entry
points are read again. A cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import json
import os
import sys
import threading

from harness.fileio import cache_home, write_text_atomic

CACHE_FORMAT = 1
_lock = threading.Lock()
_memo: dict[str, list[tuple[str, str]]] | None = None


def entry_points(group: str) -> list[tuple[str, str]]:
    """(name, "module:attr") of every entry point in `group`, in installation order."""
    global _memo
    with _lock:
        if _memo is None:
            _memo = _cached_or_read()
        return list(_memo.get(group, []))


def _signature() -> list:
    signature = []
    for entry in sys.path:
        folder = entry or "."
        try:
            names = sorted(os.listdir(folder))
        except OSError:  # a zip, or a folder that does not exist
            signature.append([entry, None])
            continue
        stamps = []
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                try:
                    stamps.append([name, os.stat(os.path.join(folder, name, "entry_points.txt")).st_mtime_ns])
                except OSError:
                    stamps.append([name, None])
        signature.append([entry, stamps])
    return signature


def _cached_or_read() -> dict[str, list[tuple[str, str]]]:
    path = cache_home() / "entry-points.json"
    signature = [CACHE_FORMAT, sys.version, _signature()]
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
        if cached.get("signature") == signature:
            return {group: [tuple(ep) for ep in eps] for group, eps in cached["groups"].items()}
    except (OSError, ValueError, AttributeError, TypeError, KeyError):
        pass
    groups = _read_all()
    try:
        write_text_atomic(path, json.dumps({"signature": signature, "groups": groups}))
    except OSError:
        pass
    return groups


def _read_all() -> dict[str, list[tuple[str, str]]]:
    from importlib import metadata

    everything = metadata.entry_points()
    return {group: [(ep.name, ep.value) for ep in everything.select(group=group)]
            for group in sorted(everything.groups) if group.startswith("architect.")}

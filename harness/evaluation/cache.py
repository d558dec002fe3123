"""Result cache keyed by (candidate hash, tier, episode id).

Entries live under `<cache>/results` (`$ARCHITECT_CACHE_DIR/results`, default `~/.cache/architect/results`):
`<hash[:2]>/<hash>/<tier>/<episode_id>.json`, plus the episode's JSONL log
gzipped next to it when one was written. Each candidate folder is guarded by a
file lock; files are written atomically. Only episodes that ran to a clean end
(no agent error, no infrastructure failure, not cut by the wall clock, which
depends on the machine) are stored, so a cached result is always reproducible.
Each entry also records a fingerprint of the code that produced it (the
executor package and the canvas runtime): after that code changes, old entries
are misses rather than stale answers.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import json
import re
import threading
from pathlib import Path

from filelock import FileLock

from harness.errors import UserError
from harness.fileio import read_json, write_bytes_atomic, write_json_atomic
from harness.evaluation.records import jsonable

CACHE_FORMAT = 1
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
# CPython 3.11 can fail ast.parse run in two threads at once (SystemError: AST constructor recursion
# depth mismatch); SHAPER validates proposals in parallel threads
_PARSE_LOCK = threading.Lock()


def default_cache_dir() -> Path:
    from harness.roots import result_cache_dir

    return result_cache_dir()


def cacheable(record: dict) -> bool:
    return (
        not record.get("infra_error")
        and not record.get("error")
        and record.get("termination") not in ("node_error", "wall_time")
    )


def code_fingerprint(executor_dir: Path) -> str:
    """sha256 over the sources of the executor package, of the sibling packages it imports
    (shared code such as executors/mp3d, found transitively), and of the canvas."""
    from harness import PROJECT_ROOT

    h = hashlib.sha256()
    roots = [Path(executor_dir), *shared_packages(Path(executor_dir)), PROJECT_ROOT / "harness" / "canvas"]
    for root in roots:
        for path in _sources(root):
            h.update(path.relative_to(root).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _sources(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".py", ".yaml", ".yml", ".json")
                  and "__pycache__" not in p.parts)


def shared_packages(package_dir: Path) -> list[Path]:
    """Folders of the packages next to `package_dir` (same parent package) that its modules
    import, directly or through each other, in the order found."""
    parent = package_dir.parent
    if not (parent / "__init__.py").is_file():
        return []
    prefix = parent.name + "."
    found: list[Path] = []
    pending = [package_dir]
    while pending:
        for path in (p for p in _sources(pending.pop()) if p.suffix == ".py"):
            for name in _imported(path):
                if name.startswith(prefix):
                    sibling = parent / name[len(prefix):].split(".")[0]
                    if sibling.is_dir() and sibling != package_dir and sibling not in found:
                        found.append(sibling)
                        pending.append(sibling)
    return found


def _imported(path: Path) -> set[str]:
    try:
        source = path.read_text(encoding="utf-8")
        with _PARSE_LOCK:
            tree = ast.parse(source, str(path))
    except (SyntaxError, UnicodeDecodeError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


class ResultCache:
    def __init__(self, candidate_hash: str, tier: str, root: Path | None = None, code: str = ""):
        self.code = code
        self.root = Path(root) if root else default_cache_dir()
        self.dir = self.root / candidate_hash[:2] / candidate_hash / _SAFE.sub("_", tier)
        self._lock_dir = self.root / candidate_hash[:2]
        self._lock = FileLock(str(self._lock_dir / f"{candidate_hash}.lock"), timeout=60)

    def _paths(self, episode_id: str) -> tuple[Path, Path]:
        name = _SAFE.sub("_", str(episode_id))
        return self.dir / f"{name}.json", self.dir / f"{name}.jsonl.gz"

    def get(self, episode: dict, log_path: Path | None) -> dict | None:
        """The cached record for this episode, restoring its log to `log_path`
        if one is wanted; None on a miss (or when the wanted log is missing)."""
        rec_path, log_gz = self._paths(episode["episode_id"])
        if not rec_path.is_file():
            return None
        self._lock_dir.mkdir(parents=True, exist_ok=True)
        with self._lock:
            try:
                entry = read_json(rec_path, "cache entry")
            except (OSError, ValueError):
                return None
            if (entry.get("format") != CACHE_FORMAT or entry.get("episode") != _spec(episode)
                    or entry.get("code") != self.code):
                return None
            if log_path is not None:
                if not log_gz.is_file():
                    return None
                with gzip.open(log_gz, "rb") as src:
                    write_bytes_atomic(log_path, src.read())
        return entry["record"]

    def put(self, episode: dict, record: dict, log_path: Path | None) -> bool:
        if not cacheable(record):
            return False
        rec_path, log_gz = self._paths(episode["episode_id"])
        self.dir.mkdir(parents=True, exist_ok=True)
        with self._lock:
            if log_path is not None and Path(log_path).is_file():
                with open(log_path, "rb") as src:
                    write_bytes_atomic(log_gz, gzip.compress(src.read(), compresslevel=5))
            entry = {"format": CACHE_FORMAT, "episode": _spec(episode), "code": self.code,
                     "record": jsonable(record)}
            write_json_atomic(rec_path, entry, indent=None)
        return True


def measured_seconds(candidate_hash: str, tier: str, root: Path | None = None) -> list[float]:
    """Wall seconds of every episode the cache holds for this candidate on this tier (measured when it
    ran, on whatever load the machine had then; any code version)."""
    folder = (Path(root) if root else default_cache_dir()) / candidate_hash[:2] / candidate_hash / _SAFE.sub("_", tier)
    seconds = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            value = (read_json(path, "cache entry").get("record") or {}).get("wall_seconds")
        except (OSError, ValueError, AttributeError, UserError):
            continue
        if isinstance(value, (int, float)) and value >= 0:
            seconds.append(float(value))
    return seconds


def _spec(episode: dict) -> dict:
    """The identity of an episode as stored (JSON round-tripped, for comparison)."""
    return json.loads(json.dumps(episode, sort_keys=True, default=str))

"""The R2R data of the mapgpt executor: where it lives, how it is fetched or
imported and checked, and the readers of its files.

Layout under the data folder (`$ARCHITECT_DATA_DIR`, else
`$XDG_DATA_HOME/architect`, else `~/.local/share/architect`), `r2r/`:
`connectivity/<scan>_connectivity.json` + `scans.txt`, `R2R/R2R_<split>.json`,
`captions/<scan>.json.gz`, and optionally the real simulator's shortest-path
trajectories. `r2r_files.json` (next to this module) lists every file with its
public source, size and sha256. Files are installed one by one through a
temporary name and checked before they are renamed into place, so an
interrupted fetch or import leaves only whole, checked files and resumes where
it stopped.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path
from typing import Callable

from executors.mapgpt.graph import ScanGraph
from harness.errors import UserError
from harness.fileio import data_home

ABOUT = ("R2R on the Matterport3D navigation graphs: MatterSim connectivity, R2R train/val_seen/val_unseen, "
         "BLIP+DETR captions of every view (LangNav), from public GitHub copies; Matterport3D Terms of Use "
         "(non-commercial academic research)")
MANIFEST_PATH = Path(__file__).resolve().parent / "r2r_files.json"
SPLITS = ("train", "val_seen", "val_unseen")
FETCH_HINT = "fetch it with `architect data fetch r2r` (or import a local copy: `architect data fetch r2r --from DIR`)"


class DataMissing(UserError):
    """R2R files an episode needs are not in the data folder."""


class DataCheckFailed(UserError):
    """A fetched or imported file does not match its size or checksum."""


def r2r_dir() -> Path:
    return data_home() / "r2r"


_manifest: dict | None = None


def manifest() -> dict:
    global _manifest
    if _manifest is None:
        _manifest = json.loads(MANIFEST_PATH.read_text(encoding="utf-8"))
    return _manifest


def manifest_digest() -> str:
    """sha256 over the checked files' checksums: names the data version a result came from."""
    h = hashlib.sha256()
    for rel, entry in sorted(manifest()["files"].items()):
        h.update(f"{rel}\0{entry['sha256']}\n".encode())
    return h.hexdigest()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_ok(path: Path, entry: dict) -> bool:
    """Whether `path` holds the manifest's content (a re-gzipped caption file counts by its content)."""
    if not path.is_file():
        return False
    if path.stat().st_size == entry.get("bytes") and _sha256(path) == entry["sha256"]:
        return True
    if entry.get("gzip"):
        try:
            with gzip.open(path, "rb") as fh:
                return hashlib.sha256(fh.read()).hexdigest() == entry["content_sha256"]
        except (OSError, EOFError):
            return False
    return False


def missing(root: Path | None = None, needed: list[str] | None = None) -> list[str]:
    """Manifest files absent from `root` (existence only; `needed` narrows the list)."""
    root = Path(root) if root is not None else r2r_dir()
    names = needed if needed is not None else sorted(manifest()["files"])
    return [rel for rel in names if not (root / rel).is_file()]


def complete(root: Path | None = None) -> bool:
    """Every file of the data set is present in the data folder (checksums: `verify`)."""
    return not missing(root)


def require(needed: list[str], root: Path | None = None) -> Path:
    """The data folder, or DataMissing naming the absent files and the command to get them."""
    root = Path(root) if root is not None else r2r_dir()
    absent = missing(root, needed)
    if absent:
        shown = ", ".join(absent[:4]) + (f" and {len(absent) - 4} more" if len(absent) > 4 else "")
        raise DataMissing(f"R2R data missing under {root}: {shown}; {FETCH_HINT}")
    return root


def scan_files(scan: str) -> list[str]:
    return [f"connectivity/{scan}_connectivity.json", f"captions/{scan}.json.gz"]


# -- installing: fetch from the public sources, or import a local copy ----------------

def _install(dest: Path, produce: Callable[[str, dict, Path], None], say, names: list[str]) -> dict:
    dest.mkdir(parents=True, exist_ok=True)
    files = manifest()["files"]
    done, skipped, failed = [], [], []
    for n, rel in enumerate(names, 1):
        entry = files[rel]
        target = dest / rel
        if file_ok(target, entry):
            skipped.append(rel)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
        os.close(fd)
        try:
            produce(rel, entry, Path(tmp))
            if not file_ok(Path(tmp), entry):
                raise DataCheckFailed(f"{rel}: checksum mismatch (expected sha256 {entry['sha256'][:12]}…)")
            os.replace(tmp, target)
            done.append(rel)
            say(f"[{n}/{len(names)}] {rel}")
        except (OSError, UserError) as exc:
            failed.append({"file": rel, "error": getattr(exc, "message", None) or str(exc)})
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return {"dest": str(dest), "installed": len(done), "already_present": len(skipped), "failed": failed,
            "files": len(names)}


def import_from(source: Path, dest: Path | None = None, say=lambda m: None, names: list[str] | None = None) -> dict:
    """Copy a local copy of the data (e.g. ../shared/data/r2r) into the data folder, checked."""
    source = Path(source)
    if not source.is_dir():
        raise UserError(f"--from {source}: no such folder")
    dest = Path(dest) if dest is not None else r2r_dir()
    absent = missing(source, names)
    if absent:
        shown = ", ".join(absent[:4]) + (f" and {len(absent) - 4} more" if len(absent) > 4 else "")
        raise DataMissing(f"--from {source}: not a complete R2R copy, missing {shown}")

    def copy(rel, entry, tmp):
        shutil.copyfile(source / rel, tmp)

    result = _install(dest, copy, say, names or sorted(manifest()["files"]))
    for rel, entry in manifest()["optional"].items():
        if names is None and (source / rel).is_file() and "sha256" in entry and not file_ok(dest / rel, entry):
            shutil.copyfile(source / rel, dest / rel)
    return dict(result, source=str(source))


def fetch(dest: Path | None = None, *, base_urls: dict[str, str] | None = None, say=lambda m: None,
          timeout: float = 60.0, names: list[str] | None = None) -> dict:
    """Download every file from its public source (resumable: whole, checked files are kept).
    `base_urls` maps a source prefix to a replacement (a mirror)."""
    dest = Path(dest) if dest is not None else r2r_dir()

    def url_of(entry):
        url = entry["url"]
        for prefix, replacement in (base_urls or {}).items():
            if url.startswith(prefix):
                url = replacement + url[len(prefix):]
        return url

    def download(rel, entry, tmp):
        with urllib.request.urlopen(url_of(entry), timeout=timeout) as response, open(tmp, "wb") as out:
            if entry.get("gzip"):
                with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz:
                    shutil.copyfileobj(response, gz)
            else:
                shutil.copyfileobj(response, out)

    result = _install(dest, download, say, names or sorted(manifest()["files"]))
    for rel, entry in manifest()["optional"].items():
        if names is None and "url" in entry and not (dest / rel).is_file():
            try:
                tmp = dest / f".{Path(rel).name}.part"
                download(rel, entry, tmp)
                if len(json.loads(tmp.read_text(encoding="utf-8"))) == entry["count"]:
                    os.replace(tmp, dest / rel)
            except (OSError, ValueError) as exc:
                say(f"optional {rel}: {exc}")
    return result


def verify(root: Path | None = None) -> dict:
    """Every manifest file present and matching its checksum."""
    root = Path(root) if root is not None else r2r_dir()
    bad = [rel for rel, entry in sorted(manifest()["files"].items()) if not file_ok(root / rel, entry)]
    return {"root": str(root), "files": len(manifest()["files"]), "bad": bad, "ok": not bad}


# -- readers -----------------------------------------------------------------------------

class Dataset:
    """Lazy, per-process readers of one data folder: only the scans asked for are loaded."""

    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root is not None else r2r_dir()
        self._graphs: dict[str, ScanGraph] = {}
        self._captions: dict[str, dict] = {}
        self._splits: dict[str, dict[str, dict]] = {}
        self._lock = threading.Lock()

    @property
    def connectivity(self) -> Path:
        return self.root / "connectivity"

    def graph(self, scan: str) -> ScanGraph:
        found = self._graphs.get(scan)
        if found is None:
            require([f"connectivity/{scan}_connectivity.json"], self.root)
            found = ScanGraph.from_file(scan, self.connectivity / f"{scan}_connectivity.json")
            with self._lock:
                found = self._graphs.setdefault(scan, found)
        return found

    def captions(self, scan: str) -> dict:
        """{viewpoint: {"0".."35": {"global_cap", "dense_cap": [...]}}} of one scan."""
        found = self._captions.get(scan)
        if found is None:
            require([f"captions/{scan}.json.gz"], self.root)
            with gzip.open(self.root / "captions" / f"{scan}.json.gz", "rb") as fh:
                found = json.loads(fh.read())
            with self._lock:
                found = self._captions.setdefault(scan, found)
        return found

    def split(self, split: str) -> dict[str, dict]:
        """instr_id -> {instr_id, scan, path, heading, instruction, distance, path_id} of one R2R split."""
        if split not in SPLITS:
            raise UserError(f"unknown R2R split {split!r} (splits: {', '.join(SPLITS)})")
        found = self._splits.get(split)
        if found is None:
            rel = f"R2R/R2R_{split}.json"
            require([rel], self.root)
            found = {}
            for item in json.loads((self.root / rel).read_text(encoding="utf-8")):
                for j, text in enumerate(item["instructions"]):
                    instr_id = f"{item['path_id']}_{j}"
                    found[instr_id] = {"instr_id": instr_id, "scan": item["scan"], "path": item["path"],
                                       "heading": item["heading"], "instruction": text,
                                       "distance": item["distance"], "path_id": item["path_id"]}
            with self._lock:
                found = self._splits.setdefault(split, found)
        return found

    def episode(self, split: str, instr_id: str) -> dict:
        items = self.split(split)
        if instr_id not in items:
            raise UserError(f"R2R {split} has no instruction {instr_id!r}")
        return items[instr_id]

    def shortest_trajectories(self) -> list[dict]:
        """The real simulator's val_unseen shortest-path trajectories (all, else the 700 sample), or []."""
        for name in ("val_unseen_shortest_agent.json", "val_unseen_shortest_agent.sample.json"):
            if (self.root / name).is_file():
                return json.loads((self.root / name).read_text(encoding="utf-8"))
        return []


_datasets: dict[str, Dataset] = {}


def dataset(root: Path | None = None) -> Dataset:
    """The shared Dataset of a folder (default: the user's data folder), one per process."""
    key = str(Path(root) if root is not None else r2r_dir())
    if key not in _datasets:
        _datasets[key] = Dataset(Path(key))
    return _datasets[key]


def progress_to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)

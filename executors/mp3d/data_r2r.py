"""The R2R data set (`architect data fetch r2r`): where it lives, how it is
fetched or imported and checked, and the one reader of its files.

Layout of its folder (`<data folder>/r2r`, data folder: `$ARCHITECT_DATA_DIR`,
else `$XDG_DATA_HOME/architect`, else `~/.local/share/architect`):
`connectivity/<scan>_connectivity.json` + `scans.txt`, `R2R/R2R_<split>.json`,
`captions/<scan>.json.gz`, and optionally the real simulator's shortest-path
trajectories. `r2r_files.json` (next to this module) lists every file with its
public source, size and sha256; installing goes through `harness.data_install`
(temporary names, checked before they are renamed into place: an interrupted
fetch or import resumes where it stopped).
"""

from __future__ import annotations

import gzip
import json
import shutil
import threading
from pathlib import Path

from executors.mp3d.graph import ScanGraph
# DataCheckFailed, DataMissing, file_ok and progress_to_stderr are part of this module's interface too
from harness.data_install import (DataCheckFailed, DataMissing, Manifest, download, file_ok,  # noqa: F401
                                  mirrored, progress_to_stderr)
from harness.errors import UserError

ABOUT = ("R2R on the Matterport3D navigation graphs: MatterSim connectivity, R2R train/val_seen/val_unseen, "
         "BLIP+DETR captions of every view (LangNav), from public GitHub copies; Matterport3D Terms of Use "
         "(non-commercial academic research)")
SPLITS = ("train", "val_seen", "val_unseen")
FETCH_HINT = "fetch it with `architect data fetch r2r` (or import a local copy: `architect data fetch r2r --from DIR`)"
MANIFEST = Manifest(Path(__file__).resolve().parent / "r2r_files.json", title="R2R", fetch_hint=FETCH_HINT)


def r2r_dir() -> Path:
    return MANIFEST.root()


def manifest() -> dict:
    return MANIFEST.data


def manifest_digest() -> str:
    """sha256 over the checked files' checksums: names the data version a result came from."""
    return MANIFEST.digest()


def missing(root: Path | None = None, needed: list[str] | None = None) -> list[str]:
    """Manifest files absent from `root` (existence only; `needed` narrows the list)."""
    return MANIFEST.missing(root, needed)


def complete(root: Path | None = None) -> bool:
    """Every file of the data set is present in the data folder (checksums: `verify`)."""
    return MANIFEST.complete(root)


def require(needed: list[str], root: Path | None = None) -> Path:
    """The data folder, or DataMissing naming the absent files and the command to get them."""
    return MANIFEST.require(needed, root)


def verify(root: Path | None = None) -> dict:
    """Every manifest file present and matching its checksum."""
    return MANIFEST.verify(root)


def provenance() -> dict:
    """What produced an R2R executor's results: the simulator backend the `auto` setting
    picks here, and the data version (digest of the checked files' sha256) with the data
    folder and whether every file is present."""
    from executors.mp3d.sim import real_mattersim_available

    return {"backend": "mattersim" if real_mattersim_available() else "graph",
            "data_sha256": manifest_digest(), "data_dir": str(r2r_dir()), "data_complete": complete()}


def scan_files(scan: str) -> list[str]:
    return [f"connectivity/{scan}_connectivity.json", f"captions/{scan}.json.gz"]


def import_from(source: Path, dest: Path | None = None, say=lambda m: None, names: list[str] | None = None) -> dict:
    """Copy a local copy of the data (e.g. ../shared/data/r2r) into the data folder, checked; the
    real simulator's trajectories come along when the copy has them."""
    result = MANIFEST.copy_from(source, dest, say, names)
    source, dest = Path(source), MANIFEST.root(dest)
    for rel, entry in manifest()["optional"].items():
        if names is None and (source / rel).is_file() and "sha256" in entry and not file_ok(dest / rel, entry):
            shutil.copyfile(source / rel, dest / rel)
    return result


def fetch(dest: Path | None = None, *, base_urls: dict[str, str] | None = None, say=lambda m: None,
          timeout: float = 60.0, names: list[str] | None = None) -> dict:
    """Download every file from its public source (resumable: whole, checked files are kept).
    `base_urls` maps a source prefix to a replacement (a mirror)."""
    result = MANIFEST.download_all(dest, say, base_urls=base_urls, timeout=timeout, names=names)
    dest = MANIFEST.root(dest)
    for rel, entry in manifest()["optional"].items():
        if names is None and "url" in entry and not (dest / rel).is_file():
            tmp = dest / f".{Path(rel).name}.part"
            try:
                download(mirrored(entry["url"], base_urls), tmp, timeout=timeout)
                if len(json.loads(tmp.read_text(encoding="utf-8"))) == entry["count"]:
                    tmp.replace(dest / rel)
            except (OSError, ValueError) as exc:
                say(f"optional {rel}: {exc}")
    return result


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


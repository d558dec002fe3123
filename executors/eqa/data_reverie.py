"""The REVERIE object annotations (`architect data fetch reverie`): REVERIE's `BBox/`,
one upstream file `<scan>_<viewpoint>.json` per included viewpoint of the 90
Matterport3D scans, each `{viewpoint: {object_id: {"name", "visible_pos",
"bbox2d"}}}` — the house objects within about 3 m of that viewpoint.

Installed as one file per scan, `bbox/<scan>.json`: the scan's upstream files
merged (`{viewpoint: {object_id: …}}`, content unchanged) and written as
canonical JSON (sorted keys, no spaces), so that each has one sha256
(`reverie_files.json`). `fetch` downloads the upstream files of each scan from
GitHub (the scan's viewpoints are the included ones of its R2R connectivity
graph, so R2R must be installed first); `import_from` reads a local copy, either
a `BBox/` folder or a `BBox.tar.gz` of it. Installing goes through
`harness.data_install` (checked, resumable scan by scan).
"""

from __future__ import annotations

import json
import tarfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from executors.mp3d import data_r2r
from harness.data_install import DataMissing, Manifest, download, mirrored, progress_to_stderr  # noqa: F401
from harness.errors import UserError

ABOUT = ("REVERIE's object annotations (BBox: the Matterport3D house objects within ~3 m of every viewpoint "
         "of the 90 scans), from GitHub YuankaiQi/REVERIE at commit 46da658; the repository has no licence "
         "file, the annotations are under the Matterport3D Terms of Use (non-commercial academic research)")
FETCH_HINT = ("fetch it with `architect data fetch reverie` (or import a local copy: "
              "`architect data fetch reverie --from DIR`)")
MANIFEST = Manifest(Path(__file__).resolve().parent / "reverie_files.json", title="REVERIE", fetch_hint=FETCH_HINT)
DOWNLOADS_AT_ONCE = 8


def reverie_dir() -> Path:
    return MANIFEST.root()


def scan_file(scan: str) -> str:
    return f"bbox/{scan}.json"


def scan_of(rel: str) -> str:
    return Path(rel).stem


def merged(files: dict[str, bytes]) -> bytes:
    """The installed form of one scan: its upstream files' objects by viewpoint, canonical JSON."""
    out: dict[str, dict] = {}
    for name, data in sorted(files.items()):
        out.update(json.loads(data))
    return json.dumps(out, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _local_copy(source: Path) -> dict[str, dict[str, bytes]]:
    """Upstream BBox files of a local copy, by scan: from `source/BBox/*.json` or `source/BBox.tar.gz`."""
    by_scan: dict[str, dict[str, bytes]] = {}
    folder, archive = source / "BBox", source / "BBox.tar.gz"

    def add(name: str, data: bytes) -> None:
        stem = Path(name).stem
        if name.endswith(".json") and "_" in stem:
            by_scan.setdefault(stem.split("_", 1)[0], {})[stem] = data

    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            add(path.name, path.read_bytes())
    elif archive.is_file():
        try:
            with tarfile.open(archive, "r:gz") as tar:
                for member in tar:
                    if member.isfile():
                        add(member.name, tar.extractfile(member).read())
        except (OSError, tarfile.TarError, EOFError) as exc:
            raise UserError(f"--from {source}: cannot read {archive.name}: {exc}") from None
    else:
        raise DataMissing(f"--from {source}: not a REVERIE copy (no BBox/ folder and no BBox.tar.gz)")
    return by_scan


def _install_scans(dest: Path | None, files_of: Callable[[str], dict[str, bytes]], say, names) -> dict:
    def produce(rel, entry, tmp):
        tmp.write_bytes(merged(files_of(scan_of(rel))))

    return MANIFEST.install(dest, produce, say, names)


def import_from(source: Path, dest: Path | None = None, *, say=lambda m: None, names: list[str] | None = None) -> dict:
    """Install from a local copy (e.g. ../shared/data/reverie), every scan checked."""
    source = Path(source)
    if not source.is_dir():
        raise UserError(f"--from {source}: no such folder")
    by_scan = _local_copy(source)
    wanted = names or sorted(MANIFEST.files)
    absent = [rel for rel in wanted if scan_of(rel) not in by_scan]
    if absent:
        raise DataMissing(f"--from {source}: not a complete REVERIE copy, no BBox files of "
                          f"{', '.join(scan_of(r) for r in absent[:4])}{' …' if len(absent) > 4 else ''}")
    return dict(_install_scans(dest, lambda scan: by_scan[scan], say, wanted), source=str(source))


def fetch(dest: Path | None = None, *, say=lambda m: None, base_urls: dict[str, str] | None = None,
          timeout: float = 60.0, names: list[str] | None = None) -> dict:
    """Download each scan's upstream files from GitHub (scans already installed and correct are kept)."""

    r2r = data_r2r.dataset()
    wanted = names or sorted(MANIFEST.files)
    r2r.root.mkdir(parents=True, exist_ok=True)
    data_r2r.require([f"connectivity/{scan_of(rel)}_connectivity.json" for rel in wanted], r2r.root)
    template = MANIFEST.data["source_url"]

    def files_of(scan: str) -> dict[str, bytes]:
        graph = r2r.graph(scan)
        stems = [f"{scan}_{vp}" for vp, inc in zip(graph.ids, graph.included) if inc]
        staging = MANIFEST.root(dest) / ".downloads" / scan
        staging.mkdir(parents=True, exist_ok=True)

        def one(stem: str) -> bytes:
            part = staging / f"{stem}.json"
            if not part.is_file():
                tmp = staging / f".{stem}.part"
                download(mirrored(template.format(name=stem), base_urls), tmp, timeout=timeout)
                tmp.replace(part)
            return part.read_bytes()

        with ThreadPoolExecutor(DOWNLOADS_AT_ONCE) as pool:
            found = dict(zip(stems, pool.map(one, stems)))
        for path in staging.glob("*"):
            path.unlink()
        staging.rmdir()
        return found

    result = _install_scans(dest, files_of, say, wanted)
    downloads = MANIFEST.root(dest) / ".downloads"
    if downloads.is_dir() and not any(downloads.iterdir()):
        downloads.rmdir()
    return result


def verify(root: Path | None = None) -> dict:
    """Every scan's file present and matching its checksum."""
    return MANIFEST.verify(root)


def complete(root: Path | None = None) -> bool:
    """Every scan's file is present (checksums: `verify`)."""
    return MANIFEST.complete(root)


def require_scan(scan: str, root: Path | None = None) -> Path:
    """The data folder holding the scan's objects, or DataMissing saying what to run."""
    return MANIFEST.require([scan_file(scan)], root)

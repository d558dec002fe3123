"""The Matterport3D room labels (`architect data fetch mp3d-regions`): the official
Matterport repository's region-classification lists (`{train,test}_room_pano_image.txt`
line-aligned with `{train,test}_room_pano_label.txt`: a panorama path
`./data/mp_sb/<scan>/<viewpoint>.jpg` and its room class 1–12) and its
`metadata/category_mapping.tsv` (raw object category -> the 40 mpcat40 categories).
The files are installed unchanged, each checked against `regions_files.json`
(`harness.data_install`: resumable; `import_from` takes a local copy with the same names).
"""

from __future__ import annotations

from pathlib import Path

from harness.data_install import Manifest, progress_to_stderr  # noqa: F401  (part of the data-set contract)

ABOUT = ("Matterport3D room classes of 7,482 panoramas on 75 scans (region classification) and the raw-category "
         "-> mpcat40 mapping, from GitHub niessner/Matterport at commit 8cd7c81; code MIT, data under the "
         "Matterport3D Terms of Use (non-commercial academic research)")
FETCH_HINT = ("fetch it with `architect data fetch mp3d-regions` (or import a local copy: "
              "`architect data fetch mp3d-regions --from DIR`)")
MANIFEST = Manifest(Path(__file__).resolve().parent / "regions_files.json", title="mp3d-regions",
                    fetch_hint=FETCH_HINT)
CATEGORY_MAPPING = "category_mapping.tsv"
LABEL_LISTS = (("train_room_pano_image.txt", "train_room_pano_label.txt"),
               ("test_room_pano_image.txt", "test_room_pano_label.txt"))


def regions_dir() -> Path:
    return MANIFEST.root()


def import_from(source: Path, dest: Path | None = None, *, say=lambda m: None, names: list[str] | None = None) -> dict:
    """Copy a local copy (e.g. ../shared/data/mp3d-regions) into the data folder, checked."""
    return MANIFEST.copy_from(source, dest, say, names)


def fetch(dest: Path | None = None, *, say=lambda m: None, base_urls: dict[str, str] | None = None,
          timeout: float = 60.0, names: list[str] | None = None) -> dict:
    """Download every file from the Matterport repository (resumable)."""
    return MANIFEST.download_all(dest, say, base_urls=base_urls, timeout=timeout, names=names)


def verify(root: Path | None = None) -> dict:
    return MANIFEST.verify(root)


def complete(root: Path | None = None) -> bool:
    return MANIFEST.complete(root)


def require(root: Path | None = None) -> Path:
    """The data folder, or DataMissing saying what to run."""
    return MANIFEST.require(sorted(MANIFEST.files), root)

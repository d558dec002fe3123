"""The one reader of the annotations the EQA questions come from.

- Objects (`reverie`): per scan, every annotated house object with its raw
  Matterport category, its mpcat40 category (`category_mapping.tsv`; raw names
  such as `bath#cabinet` are looked up with `#` read as a space) and the
  viewpoints it is annotated at (within about 3 m of it) with the view indices
  it is visible in. An object absent from every viewpoint's annotation is not
  known to exist: "present" always means "annotated near some viewpoint".
- Rooms (`mp3d-regions`): the room class of a viewpoint (1–12). Classes 1 and
  3 were inferred only from the objects seen there (office, family room) and
  are uncertain; R2R's val_unseen scans have no room labels at all.
"""

from __future__ import annotations

import csv
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

from executors.eqa import data_regions, data_reverie
from harness.fileio import read_text

ROOM_NAMES = {2: "lounge", 4: "entryway", 5: "dining room", 6: "living room", 7: "stairs", 8: "kitchen",
              9: "porch", 10: "bathroom", 11: "bedroom", 12: "hallway"}
UNCERTAIN_ROOM_NAMES = {1: "office", 3: "family room"}   # inferred from the objects only: never asked about


@dataclass(frozen=True)
class SceneObject:
    object_id: str
    raw: str                                   # the raw Matterport category, e.g. "bath#cabinet"
    category: str                              # its mpcat40 category, e.g. "cabinet"
    views: dict[str, tuple[int, ...]] = field(default_factory=dict)   # viewpoint -> visible view indices


class Annotations:
    """Lazy readers of one pair of data folders (default: the user's); per scan on first use."""

    def __init__(self, reverie_root: Path | None = None, regions_root: Path | None = None):
        self.reverie_root = data_reverie.MANIFEST.root(reverie_root)
        self.regions_root = data_regions.MANIFEST.root(regions_root)
        self._categories: dict[str, str] | None = None
        self._rooms: dict[str, dict[str, int]] | None = None
        self._objects: dict[str, dict[str, SceneObject]] = {}
        self._lock = threading.Lock()

    def categories(self) -> dict[str, str]:
        """Raw Matterport category -> mpcat40 category."""
        if self._categories is None:
            path = data_regions.MANIFEST.require([data_regions.CATEGORY_MAPPING], self.regions_root)
            text = read_text(path / data_regions.CATEGORY_MAPPING, "category mapping")
            table = {row["raw_category"]: row["mpcat40"] for row in csv.DictReader(text.splitlines(), delimiter="\t")}
            with self._lock:
                self._categories = table
        return self._categories

    def category_of(self, raw: str) -> str:
        table = self.categories()
        found = table.get(raw, table.get(raw.replace("#", " ")))
        if found is None:
            raise ValueError(f"raw category {raw!r} is not in {data_regions.CATEGORY_MAPPING}")
        return found

    def room_labels(self) -> dict[str, dict[str, int]]:
        """scan -> {viewpoint: room class} for every labelled panorama."""
        if self._rooms is None:
            root = data_regions.require(self.regions_root)
            rooms: dict[str, dict[str, int]] = {}
            for images, labels in data_regions.LABEL_LISTS:
                paths = read_text(root / images, "room image list").split()
                classes = read_text(root / labels, "room label list").split()
                if len(paths) != len(classes):
                    raise ValueError(f"{images} has {len(paths)} lines but {labels} has {len(classes)}")
                for path, label in zip(paths, classes):
                    scan, name = path.split("/")[-2:]
                    rooms.setdefault(scan, {})[Path(name).stem] = int(label)
            with self._lock:
                self._rooms = rooms
        return self._rooms

    def rooms(self, scan: str) -> dict[str, int]:
        return self.room_labels().get(scan, {})

    def objects(self, scan: str) -> dict[str, SceneObject]:
        """object id -> SceneObject of one scan."""
        found = self._objects.get(scan)
        if found is None:
            root = data_reverie.require_scan(scan, self.reverie_root)
            by_viewpoint = json.loads((root / data_reverie.scan_file(scan)).read_bytes())
            raw: dict[str, str] = {}
            views: dict[str, dict[str, tuple[int, ...]]] = {}
            for viewpoint, annotated in sorted(by_viewpoint.items()):
                for object_id, entry in annotated.items():
                    raw[object_id] = entry["name"]
                    views.setdefault(object_id, {})[viewpoint] = tuple(entry["visible_pos"])
            found = {oid: SceneObject(oid, raw[oid], self.category_of(raw[oid]), views[oid]) for oid in sorted(raw)}
            with self._lock:
                found = self._objects.setdefault(scan, found)
        return found


_shared: dict[tuple[str, str], Annotations] = {}


def annotations(reverie_root: Path | None = None, regions_root: Path | None = None) -> Annotations:
    """The shared Annotations of a pair of folders (default: the user's data folder), one per process."""
    found = Annotations(reverie_root, regions_root)
    key = (str(found.reverie_root), str(found.regions_root))
    return _shared.setdefault(key, found)

"""The reverie and mp3d-regions data sets: import from a local copy (a BBox/ folder or
BBox.tar.gz), fetch over real HTTP from a loopback mirror, checks, resuming, the
generic installer's refusals, and the `architect data` commands."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import tarfile
import threading
from functools import partial
from pathlib import Path

import pytest
from navigation_testkit import FIXTURE

from executors.eqa import data_regions, data_reverie
from harness.data_install import DataMissing, Manifest, file_ok
from harness.errors import UserError

SCANS = ["gZ6f7yhEvPG", "GdvgFV5R1Z5"]
NAMES = [data_reverie.scan_file(s) for s in SCANS]


def architect(*args, env=None):
    return subprocess.run(["architect", *args], capture_output=True, text=True, env=env, timeout=120)


def upstream_files(scan: str) -> dict[str, bytes]:
    """The scan's objects as REVERIE ships them: one pretty-printed file per viewpoint."""
    merged = json.loads((FIXTURE / "reverie" / data_reverie.scan_file(scan)).read_text())
    return {f"{scan}_{vp}.json": json.dumps({vp: objects}, indent=4).encode() for vp, objects in merged.items()}


@pytest.fixture
def local_copy(tmp_path) -> Path:
    copy = tmp_path / "copy"
    (copy / "BBox").mkdir(parents=True)
    for scan in SCANS:
        for name, data in upstream_files(scan).items():
            (copy / "BBox" / name).write_bytes(data)
    return copy


def test_reverie_import_merges_each_scan_and_checks_it(local_copy, tmp_path):
    dest = tmp_path / "reverie"
    first = data_reverie.import_from(local_copy, dest, names=NAMES)
    assert first["installed"] == 2 and not first["failed"]
    for rel in NAMES:
        assert file_ok(dest / rel, data_reverie.MANIFEST.files[rel])
        assert (dest / rel).read_bytes() == (FIXTURE / "reverie" / rel).read_bytes()
    (dest / NAMES[0]).write_text("{}")                                   # damaged: replaced on the next run
    again = data_reverie.import_from(local_copy, dest, names=NAMES)
    assert again["installed"] == 1 and again["already_present"] == 1
    assert not list(dest.rglob("*.part"))


def test_reverie_import_reads_the_tar_gz_of_the_shared_copy(local_copy, tmp_path):
    archive = tmp_path / "tarred"
    archive.mkdir()
    with tarfile.open(archive / "BBox.tar.gz", "w:gz") as tar:
        tar.add(local_copy / "BBox", arcname="BBox")
    result = data_reverie.import_from(archive, tmp_path / "reverie", names=NAMES)
    assert result["installed"] == 2 and not result["failed"]


def test_reverie_import_of_a_copy_lacking_a_scan_changes_nothing(local_copy, tmp_path):
    for path in (local_copy / "BBox").glob(f"{SCANS[1]}_*.json"):
        path.unlink()
    with pytest.raises(DataMissing) as err:
        data_reverie.import_from(local_copy, tmp_path / "reverie", names=NAMES)
    assert SCANS[1] in err.value.message and "not a complete REVERIE copy" in err.value.message
    assert not (tmp_path / "reverie").exists()


def test_a_changed_upstream_file_fails_its_scans_check(local_copy, tmp_path):
    victim = next((local_copy / "BBox").glob(f"{SCANS[0]}_*.json"))
    content = json.loads(victim.read_text())
    next(iter(next(iter(content.values())).values()))["name"] = "unicorn"
    victim.write_text(json.dumps(content))
    result = data_reverie.import_from(local_copy, tmp_path / "reverie", names=NAMES)
    assert [f["file"] for f in result["failed"]] == [NAMES[0]] and "checksum mismatch" in result["failed"][0]["error"]
    assert not (tmp_path / "reverie" / NAMES[0]).exists() and (tmp_path / "reverie" / NAMES[1]).exists()


class Mirror:
    """A loopback HTTP server holding files at their raw.githubusercontent.com paths."""

    def __init__(self, root: Path):
        handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
        handler.log_message = lambda *a: None
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.root = root

    def put(self, url: str, data: bytes) -> None:
        target = self.root / url.split("://", 1)[1].split("/", 1)[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return {"https://raw.githubusercontent.com/": f"http://127.0.0.1:{self.server.server_address[1]}/"}

    def __exit__(self, *exc):
        self.server.shutdown()


def test_reverie_fetch_downloads_every_viewpoint_file_of_each_scan(tmp_path, monkeypatch):
    monkeypatch.setenv("ARCHITECT_DATA_DIR", str(FIXTURE))                 # the scans' R2R graphs
    mirror = Mirror(tmp_path / "mirror")
    template = data_reverie.MANIFEST.data["source_url"]
    for scan in SCANS:
        for name, data in upstream_files(scan).items():
            mirror.put(template.format(name=name[:-5]), data)
    with mirror as base_urls:
        result = data_reverie.fetch(tmp_path / "reverie", base_urls=base_urls, names=NAMES)
        broken = data_reverie.fetch(tmp_path / "other", base_urls={"https://raw.githubusercontent.com/":
                                                                   base_urls["https://raw.githubusercontent.com/"] + "nope/"},
                                    names=NAMES[:1])
    assert result["installed"] == 2 and not result["failed"]
    assert all(file_ok(tmp_path / "reverie" / rel, data_reverie.MANIFEST.files[rel]) for rel in NAMES)
    assert not (tmp_path / "reverie" / ".downloads").exists()
    assert broken["failed"] and "404" in broken["failed"][0]["error"] and not (tmp_path / "other" / NAMES[0]).exists()


@pytest.mark.skipif(not data_regions.complete(), reason="needs the mp3d-regions data in the data folder: run "
                    "`architect data fetch mp3d-regions` (CI imports ../shared/data/mp3d-regions with --from)")
def test_regions_fetch_and_import_check_every_file(tmp_path):
    source = data_regions.regions_dir()                                   # the installed copy has the same layout
    names = sorted(data_regions.MANIFEST.files)
    imported = data_regions.import_from(source, tmp_path / "a")
    assert imported["installed"] == len(names) and data_regions.verify(tmp_path / "a")["ok"]
    mirror = Mirror(tmp_path / "mirror")
    for rel in names:
        mirror.put(data_regions.MANIFEST.files[rel]["url"], (source / rel).read_bytes())
    with mirror as base_urls:
        fetched = data_regions.fetch(tmp_path / "b", base_urls=base_urls)
    assert fetched["installed"] == len(names) and data_regions.verify(tmp_path / "b")["ok"]


def test_a_manifest_breaking_its_schema_is_refused_naming_the_file(tmp_path):
    bad = tmp_path / "bad_files.json"
    bad.write_text(json.dumps({"dataset": "x", "description": "", "licence": "", "files": {"../up": {"sha256": "z"}}}))
    with pytest.raises(UserError) as err:
        Manifest(bad, title="X", fetch_hint="fetch it").files
    assert str(bad) in err.value.message and "invalid data-set manifest" in err.value.message


def test_the_manifests_name_public_sources_and_licences():
    assert len(data_reverie.MANIFEST.files) == 90
    assert sum(e["viewpoints"] for e in data_reverie.MANIFEST.files.values()) == 10567
    assert "github.com/YuankaiQi/REVERIE" in data_reverie.MANIFEST.data["source"]
    assert all(e["url"].startswith("https://raw.githubusercontent.com/niessner/Matterport/")
               for e in data_regions.MANIFEST.files.values())
    for module in (data_reverie, data_regions):
        assert "Matterport3D Terms of Use" in module.MANIFEST.data["licence"] and "Terms of Use" in module.ABOUT


def test_cli_imports_checks_and_refuses(local_copy, tmp_path):
    env = dict(os.environ, ARCHITECT_DATA_DIR=str(tmp_path / "data"))
    done = architect("data", "fetch", "reverie", "--from", str(local_copy), "--json", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr          # only 2 of the 90 scans
    assert "not a complete REVERIE copy" in json.loads(done.stdout)["error"]
    assert not (tmp_path / "data").exists()
    missing = architect("data", "fetch", "mp3d-regions", "--from", str(tmp_path / "nowhere"), "--json", env=env)
    assert missing.returncode == 2 and "no such folder" in json.loads(missing.stdout)["error"]
    checked = architect("data", "check", "reverie", "--json", env=env)
    assert checked.returncode == 1 and json.loads(checked.stdout)["ok"] is False

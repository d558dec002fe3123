"""The R2R data layer: import (--from), fetch over real HTTP, checks, resuming,
the missing-data error, and lazy per-scan loading."""

from __future__ import annotations

import gzip
import http.server
import json
import os
import subprocess
import threading
from functools import partial

import pytest
from mapgpt_testkit import FIXTURE, full_data_dir, needs_full_data

from executors.mp3d import data_r2r as D

SOME = ["connectivity/scans.txt", "connectivity/pLe4wQe7qrG_connectivity.json", "captions/pLe4wQe7qrG.json.gz",
        "R2R/R2R_val_unseen.json"]


def architect(*args, env=None):
    return subprocess.run(["architect", *args],
                          capture_output=True, text=True, env=env, timeout=120)


@needs_full_data
def test_import_copies_checks_and_resumes(tmp_path):
    source = full_data_dir()
    dest = tmp_path / "r2r"
    first = D.import_from(source, dest, names=SOME)
    assert first["installed"] == len(SOME) and not first["failed"]
    (dest / SOME[1]).write_text("[]")                       # damaged: replaced on the next run
    (dest / SOME[2]).unlink()                               # interrupted: fetched on the next run
    again = D.import_from(source, dest, names=SOME)
    assert again["installed"] == 2 and again["already_present"] == 2
    assert all(D.file_ok(dest / rel, D.manifest()["files"][rel]) for rel in SOME)
    assert not list(dest.rglob("*.part"))


@needs_full_data
def test_fetch_downloads_over_http_and_gzips_the_captions(tmp_path):
    """A loopback HTTP server stands in for GitHub (same paths, captions as plain JSON)."""
    source = full_data_dir()
    mirror = tmp_path / "mirror"
    for rel in SOME:
        url = D.manifest()["files"][rel]["url"]
        target = mirror / url.split("://", 1)[1].split("/", 1)[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        payload = (source / rel).read_bytes()
        target.write_bytes(gzip.decompress(payload) if rel.endswith(".gz") else payload)
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(mirror))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        result = D.fetch(tmp_path / "r2r", base_urls={"https://raw.githubusercontent.com/": base}, names=SOME)
        missing_file = D.fetch(tmp_path / "other", base_urls={"https://raw.githubusercontent.com/": base + "nope/"},
                               names=SOME[:1])
    finally:
        server.shutdown()
    assert result["installed"] == len(SOME) and not result["failed"]
    assert D.file_ok(tmp_path / "r2r" / SOME[2], D.manifest()["files"][SOME[2]])
    assert missing_file["failed"] and "404" in missing_file["failed"][0]["error"]
    assert not (tmp_path / "other" / SOME[0]).exists()


def test_an_episode_without_its_data_names_the_files_and_the_command(tmp_path):
    ds = D.Dataset(tmp_path / "r2r")
    with pytest.raises(D.DataMissing) as err:
        ds.split("val_unseen")
    assert "R2R/R2R_val_unseen.json" in err.value.message and "architect data fetch r2r" in err.value.message


def test_cli_import_of_an_incomplete_copy_fails_cleanly(tmp_path):
    env = dict(os.environ, ARCHITECT_DATA_DIR=str(tmp_path / "data"))
    done = architect("data", "fetch", "r2r", "--from", str(FIXTURE / "r2r"), "--json", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"into {tmp_path / 'data' / 'r2r'}" in done.stderr and "ARCHITECT_DATA_DIR" in done.stderr  # where, and how to change it
    reply = json.loads(done.stdout)
    assert reply["ok"] is False and "not a complete R2R copy" in reply["error"]
    assert not (tmp_path / "data").exists()
    checked = architect("data", "check", "r2r", "--json", env=env)
    assert checked.returncode == 1 and json.loads(checked.stdout)["ok"] is False


def test_only_the_scans_asked_for_are_loaded():
    ds = D.Dataset(FIXTURE / "r2r")
    item = next(iter(ds.split("val_unseen").values()))
    ds.graph(item["scan"])
    ds.captions(item["scan"])
    assert set(ds._graphs) == {item["scan"]} and set(ds._captions) == {item["scan"]}


def test_manifest_lists_the_whole_data_set_with_public_sources():
    files = D.manifest()["files"]
    assert sum(rel.startswith("connectivity/") and rel.endswith("_connectivity.json") for rel in files) == 90
    assert sum(rel.startswith("captions/") for rel in files) == 90
    assert all(entry["url"].startswith("https://raw.githubusercontent.com/") for entry in files.values())
    assert "Matterport3D Terms of Use" in D.manifest()["licence"]

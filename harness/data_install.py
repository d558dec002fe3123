"""Checksummed, resumable installation of a data set's files, from the manifest
that lists them: downloaded from their public sources, or imported from a local
copy, and checked again at any time.

A manifest is a JSON file shipped next to the data-set module: `{"dataset",
"description", "licence", "files": {<path under the data set's folder>:
{"sha256", "bytes", "url"?, "gzip"?, "content_sha256"?}}}`. A `gzip` entry is
stored gzipped although its source serves it plain; such a file also counts as
correct when its decompressed content has `content_sha256` (a re-gzipped copy).

Every file is produced under a temporary name in its target folder, checked
against its size and checksum, and only then renamed into place, so an
interrupted fetch or import leaves only whole, checked files, and running it
again installs what is missing or wrong (it resumes). The data set's folder is
`harness.roots.data_home()/<dataset>` unless a destination is given.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import sys
import tempfile
import urllib.request
from functools import cached_property
from pathlib import Path
from typing import Callable

from harness.errors import UserError
from harness.roots import data_home

Producer = Callable[[str, dict, Path], None]   # (relative path, manifest entry, temporary file to fill)


class DataMissing(UserError):
    """Files a data set needs are not in its folder."""


class DataCheckFailed(UserError):
    """A fetched or imported file does not match its size or checksum."""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_ok(path: Path, entry: dict) -> bool:
    """Whether `path` holds the manifest entry's content (a re-gzipped file counts by its content)."""
    if not path.is_file():
        return False
    if path.stat().st_size == entry.get("bytes") and sha256_file(path) == entry["sha256"]:
        return True
    if entry.get("gzip"):
        try:
            with gzip.open(path, "rb") as fh:
                return hashlib.sha256(fh.read()).hexdigest() == entry["content_sha256"]
        except (OSError, EOFError):
            return False
    return False


def download(url: str, target: Path, *, gzip_it: bool = False, timeout: float = 60.0) -> None:
    """Write the body of `url` to `target` (gzipped, without a timestamp, when `gzip_it`)."""
    with urllib.request.urlopen(url, timeout=timeout) as response, open(target, "wb") as out:
        if gzip_it:
            with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz:
                shutil.copyfileobj(response, gz)
        else:
            shutil.copyfileobj(response, out)


def mirrored(url: str, base_urls: dict[str, str] | None) -> str:
    """`url` with a source prefix replaced by its mirror (`base_urls`: prefix -> replacement)."""
    for prefix, replacement in (base_urls or {}).items():
        if url.startswith(prefix):
            return replacement + url[len(prefix):]
    return url


def progress_to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _shown(names: list[str]) -> str:
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


class Manifest:
    """One data set's files as its manifest lists them, and the operations on its folder."""

    def __init__(self, path: Path, *, title: str, fetch_hint: str):
        self.path = Path(path)
        self.title = title              # how messages name the data set, e.g. "R2R"
        self.fetch_hint = fetch_hint    # what to run when files are missing

    @cached_property
    def data(self) -> dict:
        from harness.fileio import read_json
        from harness.schemas import validate_instance

        data = read_json(self.path, "data-set manifest")
        problems = validate_instance("data_manifest", data)
        if problems:
            raise UserError(f"{self.path}: invalid data-set manifest: " + "; ".join(problems[:3]))
        return data

    @property
    def name(self) -> str:
        return self.data["dataset"]

    @property
    def files(self) -> dict[str, dict]:
        return self.data["files"]

    def root(self, root: Path | None = None) -> Path:
        return Path(root) if root is not None else data_home() / self.name

    def digest(self) -> str:
        """sha256 over the checked files' checksums: names the data version a result came from."""
        h = hashlib.sha256()
        for rel, entry in sorted(self.files.items()):
            h.update(f"{rel}\0{entry['sha256']}\n".encode())
        return h.hexdigest()

    def missing(self, root: Path | None = None, needed: list[str] | None = None) -> list[str]:
        """Manifest files absent from the folder (existence only; `needed` narrows the list)."""
        root = self.root(root)
        names = needed if needed is not None else sorted(self.files)
        return [rel for rel in names if not (root / rel).is_file()]

    def complete(self, root: Path | None = None) -> bool:
        """Every file of the data set is present (checksums: `verify`)."""
        return not self.missing(root)

    def require(self, needed: list[str], root: Path | None = None) -> Path:
        """The data set's folder, or DataMissing naming the absent files and what to run."""
        root = self.root(root)
        absent = self.missing(root, needed)
        if absent:
            raise DataMissing(f"{self.title} data missing under {root}: {_shown(absent)}; {self.fetch_hint}")
        return root

    def verify(self, root: Path | None = None) -> dict:
        """Every manifest file present and matching its checksum."""
        root = self.root(root)
        bad = [rel for rel, entry in sorted(self.files.items()) if not file_ok(root / rel, entry)]
        return {"root": str(root), "files": len(self.files), "bad": bad, "ok": not bad}

    def install(self, dest: Path | None, produce: Producer, say: Callable[[str], None],
                names: list[str] | None = None) -> dict:
        """Produce every listed file that is not already whole and correct in `dest`, each
        through a temporary name, checked before it is renamed into place."""
        dest = self.root(dest)
        dest.mkdir(parents=True, exist_ok=True)
        names = names or sorted(self.files)
        done, skipped, failed = [], [], []
        for n, rel in enumerate(names, 1):
            entry = self.files[rel]
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

    def copy_from(self, source: Path, dest: Path | None, say: Callable[[str], None],
                  names: list[str] | None = None) -> dict:
        """Import a local copy laid out as the data set's folder (e.g. ../shared/data/r2r), checked."""
        source = Path(source)
        if not source.is_dir():
            raise UserError(f"--from {source}: no such folder")
        absent = self.missing(source, names)
        if absent:
            raise DataMissing(f"--from {source}: not a complete {self.title} copy, missing {_shown(absent)}")

        def copy(rel, entry, tmp):
            shutil.copyfile(source / rel, tmp)

        return dict(self.install(dest, copy, say, names), source=str(source))

    def download_all(self, dest: Path | None, say: Callable[[str], None], *, base_urls: dict[str, str] | None = None,
                     timeout: float = 60.0, names: list[str] | None = None) -> dict:
        """Download every listed file from its `url` (resumable: whole, checked files are kept)."""
        def fetch_one(rel, entry, tmp):
            download(mirrored(entry["url"], base_urls), tmp, gzip_it=bool(entry.get("gzip")), timeout=timeout)

        return self.install(dest, fetch_one, say, names)

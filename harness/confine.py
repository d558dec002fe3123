"""Paths written inside candidate files (e.g. `model_profile.path`) must stay
inside the folders they are allowed to name: a path (relative or absolute)
that lands outside them, climbs out with `..` or leaves through a symlink
resolves to nothing."""

from __future__ import annotations

import os
from pathlib import Path

from harness import PROJECT_ROOT

PROFILES_DIR = PROJECT_ROOT / "profiles"


def confined_file(path: str | os.PathLike, places: list[tuple[Path, Path]]) -> Path | None:
    """The first existing file `base / path` (an absolute path stands for
    itself) that, symlinks resolved, lies inside its `root`, trying each
    `(base, root)` in turn; None if there is none."""
    raw = Path(path)
    if not str(path).strip() or "\x00" in str(path):
        return None
    for base, root in places:
        try:
            target = (Path(base) / raw).resolve()
            if target.is_relative_to(Path(root).resolve()) and target.is_file():
                return target
        except (OSError, RuntimeError, ValueError):
            continue
    return None


def profile_places(candidate_dir: str | os.PathLike | None) -> list[tuple[Path, Path]]:
    """Where a candidate's `model_profile.path` may point: into the candidate
    folder, or (relative to the project root) into the project's profiles/."""
    places = [(Path(candidate_dir), Path(candidate_dir))] if candidate_dir is not None else []
    return places + [(PROJECT_ROOT, PROFILES_DIR)]

"""The run's own git repository, driven through the `git` command."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from harness.errors import UserError

TRAILER = "Architect-Iteration"
# How long to wait for a git process orphaned by a killed parent before its
# lock files are considered stale (a commit in a run repository takes ms).
SETTLE_SECONDS = 3.0
_ENV = {
    "GIT_AUTHOR_NAME": "architect",
    "GIT_AUTHOR_EMAIL": "architect@localhost",
    "GIT_COMMITTER_NAME": "architect",
    "GIT_COMMITTER_EMAIL": "architect@localhost",
    "GIT_TERMINAL_PROMPT": "0",
}


def git(root: Path, *args: str, check: bool = True) -> str:
    # GIT_DIR pins the run's own repository: with .git deleted or damaged, git
    # must fail rather than find (and change) an enclosing repository.
    root = Path(root).resolve()
    env = dict(os.environ, **_ENV, GIT_DIR=str(root / ".git"), GIT_WORK_TREE=str(root))
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise UserError(f"git {' '.join(args)} failed in {root}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def init(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "commit.gpgsign", "false")
    git(root, "config", "core.autocrlf", "false")


def commit(root: Path, subject: str, trailer: tuple[str, int], paths: list[str]) -> str:
    """Stage `paths` and make one commit whose message ends with `Key: value`."""
    git(root, "add", "-A", "--", *paths)
    git(root, "commit", "-q", "--no-verify", "-m", f"{subject}\n\n{trailer[0]}: {trailer[1]}\n")
    return head(root)


def commit_pending(root: Path, subject: str, trailer: tuple[str, int]) -> str | None:
    """Commit every uncommitted change of the run (None: the tree was clean)."""
    if not git(root, "status", "--porcelain").strip():
        return None
    return commit(root, subject, trailer, ["."])


def uncommitted(root: Path) -> list[str]:
    """Paths git reports as changed or untracked in the run (ignored files excluded)."""
    return [line[3:] for line in git(root, "status", "--porcelain", "--untracked-files=all").splitlines()
            if line.strip()]


def commit_iteration(root: Path, iteration: int, subject: str, paths: list[str]) -> str:
    return commit(root, subject, (TRAILER, iteration), paths)


REPAIR_HINT = ("the run's history lives in its .git folder: restore it from a backup (or `git -C {root} "
               "reset` to a valid commit if only HEAD is damaged); architect will not change the run until then")


def repository_problem(root: Path) -> str | None:
    """Why the run's own git repository is unusable (None: it is usable)."""
    root = Path(root).resolve()
    git_dir = root / ".git"
    if not git_dir.is_dir():
        return f"{git_dir} is missing: the run's git history is gone"
    try:
        head_text = (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return f"{git_dir / 'HEAD'} is missing or unreadable"
    well_formed = head_text.startswith("ref: refs/") or (len(head_text) == 40 and all(
        c in "0123456789abcdef" for c in head_text))
    if not well_formed:
        return f"{git_dir / 'HEAD'} is damaged (holds {head_text[:40]!r})"
    proc = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD^{commit}"], capture_output=True, text=True,
                          env=dict(os.environ, **_ENV, GIT_DIR=str(git_dir), GIT_WORK_TREE=str(root)))
    if proc.returncode != 0:
        return f"{git_dir}: HEAD names no commit (the repository is empty or damaged)"
    return None


def head(root: Path) -> str | None:
    out = git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).strip()
    return out or None


def head_iteration(root: Path) -> int | None:
    """The iteration number recorded in HEAD's trailer (None for an empty repo)."""
    if head(root) is None:
        return None
    value = git(root, "log", "-1", f"--format=%(trailers:key={TRAILER},valueonly)").strip()
    return int(value) if value.isdigit() else None


_iterations_at: dict[tuple[str, str], list[int]] = {}  # (root, HEAD commit) -> its history's iterations


def committed_iterations(root: Path) -> list[int]:
    """Iteration numbers of all commits, oldest first. A commit names its whole
    history, so the answer is remembered per HEAD commit for this process."""
    commit = head(root)
    if commit is None:
        return []
    key = (str(Path(root).resolve()), commit)
    if key not in _iterations_at:
        out = git(root, "log", "--reverse", f"--format=%(trailers:key={TRAILER},valueonly)%x00")
        _iterations_at[key] = [int(v.strip()) for v in out.split("\x00") if v.strip().isdigit()]
    return list(_iterations_at[key])


def settle(root: Path, wait_seconds: float | None = None) -> None:
    """Wait for a git process orphaned by a killed parent to finish, then clear
    lock files nobody holds anymore. Only call while holding the run lock."""
    git_dir = root / ".git"
    deadline = time.monotonic() + (SETTLE_SECONDS if wait_seconds is None else wait_seconds)
    locks = lambda: [p for p in (git_dir / "index.lock", git_dir / "HEAD.lock") if p.exists()] + list(
        (git_dir / "refs").rglob("*.lock")
    )
    while locks() and time.monotonic() < deadline:
        time.sleep(0.05)
    for stale in locks():
        stale.unlink(missing_ok=True)


def reset_index(root: Path) -> None:
    """Unstage anything a killed `git add` left in the index."""
    if head(root) is not None:
        git(root, "reset", "-q")

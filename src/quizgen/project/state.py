"""Where a project's build state lives: in the user's cache directory, keyed by the output folder.

The result store, the outputs manifest and the commit journal say what a build may skip or must
replay, so they are kept where a card repository cannot write them: `$QUIZGEN_CACHE_DIR`, else
`$XDG_CACHE_HOME/quizgen`, else `~/.cache/quizgen`, then `projects/<digest of the output folder>/`.
Whatever a repository ships in its output folder (an old `build/.cache`, a journal) is never read.
A project's folder is touched whenever a build uses it; one no build used for CACHE_KEEP_DAYS (its
project deleted, a CI checkout gone) is removed by the next build of any project.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import time
from pathlib import Path

from quizgen.constants import CACHE_KEEP_DAYS
from quizgen.errors import OutputError

PROJECTS = "projects"
KEY_LENGTH = 24  # hex digits of the digest: collisions between one user's projects are not a concern


def home() -> Path:
    """quizgen's folder in the user's cache directory."""
    if chosen := os.environ.get("QUIZGEN_CACHE_DIR"):
        return Path(chosen).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"  # the spec ignores a relative one
    return base / "quizgen"


def where(out_dir: Path) -> Path:
    """The state folder of the project whose outputs go to `out_dir` (not created)."""
    key = hashlib.sha256(str(out_dir.resolve()).encode()).hexdigest()[:KEY_LENGTH]
    return home() / PROJECTS / key


def folder(out_dir: Path) -> Path:
    """The state folder of `out_dir`'s project, made private (0700) where quizgen creates it."""
    path = where(out_dir)
    if path.is_dir():
        with contextlib.suppress(OSError):
            os.utime(path)  # in use: not pruned
        return path
    missing = [p for p in [path, *path.parents] if not p.is_dir()]
    try:
        for part in reversed(missing):
            part.mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"{path}: cannot keep the build state here: {exc.strerror or exc} "
            "(set QUIZGEN_CACHE_DIR or XDG_CACHE_HOME to a folder of your own)"
        ) from None
    return path


def prune() -> None:
    """Remove the state folders no build used for CACHE_KEEP_DAYS (any failure leaves them for later)."""
    cutoff = time.time() - CACHE_KEEP_DAYS * 86400
    with contextlib.suppress(OSError), os.scandir(home() / PROJECTS) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                shutil.rmtree(entry.path, ignore_errors=True)

"""Folder trees listed and deleted without recursion: a repository's folders (cards, templates, a
committed output folder) and a snippet's job folder may nest deeper than Python recurses, and
`Path.rglob` and `shutil.rmtree` recurse once per level (1,500 levels raised RecursionError)."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path


def walk(folder: Path) -> list[Path]:
    """Every file and folder under `folder` (a symlink listed, not entered), as `rglob("*")` gives them."""
    found: list[Path] = []
    todo = [folder]
    while todo:
        try:
            with os.scandir(todo.pop()) as entries:
                for entry in entries:
                    found.append(Path(entry.path))
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(Path(entry.path))
        except OSError:  # gone or unreadable meanwhile: as rglob, nothing of it
            continue
    return found


def remove(path: str | Path) -> None:
    """`shutil.rmtree(path, ignore_errors=True)`, for a tree of any depth (a symlink in it goes itself)."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:  # deepest first, what rmtree left
        for entry in sorted(walk(Path(path)), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                if entry.is_dir() and not entry.is_symlink():
                    entry.rmdir()
                else:
                    entry.unlink()
        with contextlib.suppress(OSError):
            os.rmdir(path)

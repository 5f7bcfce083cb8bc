"""Files read as nginx's `disable_symlinks on` serves them: beneath a folder, through no link at all,
regular files only, with a size bound. A folder a repository ships (or a process swaps afterwards) can
hold links anywhere; following none of them means no path can lead out of the folder.

Each part of the name is opened relative to the folder before it (`openat` with `O_NOFOLLOW`), so a part
replaced by a link between two checks is refused too: there is no check separate from the use.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO planted in place of a file opens at once (and is then refused), never blocks.
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
CHUNK = 1 << 16


def parts(name: str) -> list[str] | None:
    """The parts of a relative name ('decks/a.html'), or None for one that could leave its folder."""
    split = name.split("/")  # as written: an empty part ('a//b', '/a', 'a/') is refused, not tidied
    if any(p in ("", ".", "..") or "\0" in p for p in split):
        return None
    return split


def open_beneath(top: Path, name: str) -> int:
    """A read-only descriptor of the regular file `name` under `top` (which is opened as named), no part of
    `name` a link. OSError otherwise (ELOOP or ENOTDIR for a link, EINVAL for a name that leaves)."""
    names = parts(name)
    if names is None:
        raise OSError(errno.EINVAL, "not a name beneath the folder", name)
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in names[:-1]:
            inner = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = inner
        found = os.open(names[-1], _FILE, dir_fd=fd)
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(found).st_mode):
        os.close(found)
        raise OSError(errno.EINVAL, "not a regular file", name)
    return found


def read_beneath(top: Path, name: str, limit: int) -> bytes | None:
    """The bytes of the regular file `name` under `top` (see open_beneath), or None when it cannot be
    opened that way or holds more than `limit` bytes."""
    try:
        fd = open_beneath(top, name)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        data = file.read(limit + 1)
    return data if len(data) <= limit else None


def digest(top: Path, name: str) -> tuple[int, str] | None:
    """Size and SHA-256 of the regular file `name` under `top` (see open_beneath), read in chunks; None
    when it cannot be opened that way."""
    try:
        fd = open_beneath(top, name)
    except OSError:
        return None
    sha = hashlib.sha256()
    size = 0
    with os.fdopen(fd, "rb") as file:
        while chunk := file.read(CHUNK):
            sha.update(chunk)
            size += len(chunk)
    return size, sha.hexdigest()

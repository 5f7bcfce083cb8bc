"""Reading a file a repository or a snippet hands quizgen: a regular file only, not through a symlink
unless the caller allows it, and never more than a bound checked before reading.

A FIFO blocks whoever opens it, a device (`/dev/zero`) never ends, a link leads anywhere, and a file a
clone ships compressed may be gigabytes on disk: every such read goes through here. `O_NOFOLLOW` refuses
a link as the file's own name only; a link in a folder above is project/confine.py's to judge (the project's
folders may link inside the project).

Files beneath a folder a repository ships or a process may swap (the output folder `serve` sends) are
read as nginx's `disable_symlinks on` serves them: each part of the name opened relative to the one
before (`openat` with `O_NOFOLLOW`), so no link anywhere on the way is followed, and a part replaced by
a link between two checks is refused too: there is no check separate from the use.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import stat
from pathlib import Path


class Refused(OSError):
    """The file is not one quizgen reads: a symlink, not a regular file, or too large."""


class TooLarge(Refused):
    """The file has more bytes than its bound."""

    def __init__(self, path: str | Path, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{size:,} bytes, past the {limit:,} allowed", str(path))
        self.size, self.limit = size, limit


def open_regular(path: str | Path, *, follow: bool = False) -> io.BufferedReader:
    """`path` opened for reading if it is a regular file (a symlink only when `follow`); the open never
    blocks (O_NONBLOCK: a FIFO would wait for a writer)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise Refused(errno.ELOOP, "a symlink: not followed", str(path)) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Refused(errno.EINVAL, "not a regular file", str(path))
    return io.BufferedReader(io.FileIO(fd, "rb"))


def head(path: str | Path, size: int, *, follow: bool = False) -> bytes:
    """The first `size` bytes of the regular file `path` (b"" when it is not one or cannot be read)."""
    try:
        with open_regular(path, follow=follow) as f:
            return f.read(size)
    except OSError:
        return b""


def read_bytes(path: str | Path, limit: int, *, follow: bool = False) -> bytes:
    """The bytes of the regular file `path`; TooLarge, before reading, past `limit` bytes."""
    with open_regular(path, follow=follow) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise TooLarge(path, size, limit)
        data = f.read(limit + 1)
    if len(data) > limit:  # it grew since
        raise TooLarge(path, len(data), limit)
    return data


def digest(path: str | Path, *, follow: bool = False) -> str:
    """The SHA-256 of the regular file `path`, read in blocks (a file of any size in little memory)."""
    with open_regular(path, follow=follow) as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def read_text(path: str | Path, limit: int, *, follow: bool = False) -> str:
    """`read_bytes` decoded as UTF-8 (UnicodeDecodeError when it is not)."""
    return read_bytes(path, limit, follow=follow).decode("utf-8")


# -- beneath a folder, through no link at all -------------------------------------------------------

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO planted in place of a file opens at once (and is then refused), never blocks.
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


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


def digest_beneath(top: Path, name: str) -> tuple[int, str] | None:
    """Size and SHA-256 of the regular file `name` under `top` (see open_beneath), read in chunks; None
    when it cannot be opened that way."""
    try:
        fd = open_beneath(top, name)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        sha = hashlib.file_digest(file, "sha256")
        return file.tell(), sha.hexdigest()

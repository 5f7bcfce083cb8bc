"""The C library through ctypes, loaded once per process. The zygote loads it before it forks anything
(its first act is `prctl`), so no job's process loads its own: loading writes ~60 pages (~0.3 ms)."""

from __future__ import annotations

import ctypes
import functools


@functools.cache
def libc() -> ctypes.CDLL:
    """This process's C library; a call's errno is kept for `ctypes.get_errno()`."""
    return ctypes.CDLL(None, use_errno=True)


def prctl(option: int, *args: int) -> None:
    """prctl(2) with integer arguments; OSError (with errno) when it fails."""
    if libc().prctl(option, *args) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option})")

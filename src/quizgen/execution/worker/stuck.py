"""Where a snippet was when its timeout struck.

The process that runs jobs registers a stack dump on SIGNAL (faulthandler: written by a C signal
handler, so it comes even from a snippet stuck inside one long torch call) into a file of its worker's
folder. Whoever stops a job at its timeout asks for the dump first, gives it a moment, and names the
innermost line of a card file in it. A snippet that takes SIGNAL for itself only loses its line.

The folder is the snippet's to write: it may replace the dump with a FIFO (opening it would block the
stopper past every timeout), a symlink (truncating through it would empty a file of the user's) or a
device. So the stopper touches only a regular file, opened without following a link and without
blocking, and reads a bounded head of it.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import re
import signal
import stat
import time

from quizgen.project import files

SIGNAL = signal.SIGUSR2
DUMP = "stack.txt"  # in the worker's folder (the job's process writes it, its stopper reads it)
WAIT = 0.3  # seconds the stopper waits for the dump: it takes microseconds, unless the machine is busy
READ = 1 << 16  # bytes of the dump read: the stacks of a few threads, or what a snippet filled it with
_FRAME = re.compile(r'^[ \t]*File "(.+\.ya?ml)", line (\d+)', re.MULTILINE)  # card files are YAML
# (`[ \t]`, not `\s`: `^\s*` spans lines, quadratic in the 64 KiB a snippet can write there: ~3 s of CPU)


def arm(folder: str) -> None:
    """In the job's process: dump its stack into `folder` when SIGNAL comes."""
    with contextlib.suppress(OSError, RuntimeError, ValueError):
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW
        fd = os.open(os.path.join(folder, DUMP), flags, 0o600)
        faulthandler.register(SIGNAL, file=fd, all_threads=True, chain=False)


def ask(pid: int, folder: str) -> str:
    """Ask the job's process `pid` for its stack (before stopping it): where in the card files it was
    ("cards/a.yaml:9"), or "" when it does not say."""
    path = os.path.join(folder, DUMP)
    _empty(path)
    try:
        os.kill(pid, SIGNAL)
    except OSError:
        return ""
    deadline, size = time.monotonic() + WAIT, -1
    while time.monotonic() < deadline:
        time.sleep(0.01)
        try:
            now = os.lstat(path).st_size
        except OSError:
            return ""
        if now and now == size:
            break  # written, and no more coming
        size = now
    found = _FRAME.search(files.head(path, READ).decode("utf-8", "replace"))
    return f"{found[1]}:{found[2]}" if found else ""


def _empty(path: str) -> None:
    """Truncate the dump, if it is still a regular file (never through a link, never waiting)."""
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    with contextlib.suppress(OSError):
        fd = os.open(path, flags)
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.ftruncate(fd, 0)
        finally:
            os.close(fd)


def timed_out(limit: float, reached: str) -> str:
    """The message of a job stopped at its timeout."""
    where = f": it was at {reached} when stopped" if reached else " and was stopped"
    return f"the snippet did not finish within {limit:.3g} s (timeout){where}"


def is_timeout(error: str) -> bool:
    """Whether a job's error is `timed_out`'s."""
    return error.startswith("the snippet did not finish within ") and " s (timeout)" in error

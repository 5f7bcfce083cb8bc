"""Where a snippet was when its timeout struck.

The process that runs jobs registers a stack dump on SIGNAL (faulthandler: written by a C signal
handler, so it comes even from a snippet stuck inside one long torch call) into a file of its worker's
folder. Whoever stops a job at its timeout asks for the dump first, gives it a moment, and names the
innermost line of a card file in it. A snippet that takes SIGNAL for itself only loses its line.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import re
import signal
import time

SIGNAL = signal.SIGUSR2
DUMP = "stack.txt"  # in the worker's folder (the job's process writes it, its stopper reads it)
WAIT = 0.3  # seconds the stopper waits for the dump: it takes microseconds, unless the machine is busy
_FRAME = re.compile(r'^[ \t]*File "(.+\.ya?ml)", line (\d+)', re.MULTILINE)  # card files are YAML
# (`[ \t]`, not `\s`: `^\s*` spans lines, quadratic in the 64 KiB a snippet can write there: ~3 s of CPU)


def arm(folder: str) -> None:
    """In the job's process: dump its stack into `folder` when SIGNAL comes."""
    with contextlib.suppress(OSError, RuntimeError, ValueError):
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC
        fd = os.open(os.path.join(folder, DUMP), flags, 0o600)
        faulthandler.register(SIGNAL, file=fd, all_threads=True, chain=False)


def ask(pid: int, folder: str) -> str:
    """Ask the job's process `pid` for its stack (before stopping it): where in the card files it was
    ("cards/a.yaml:9"), or "" when it does not say."""
    path = os.path.join(folder, DUMP)
    with contextlib.suppress(OSError):
        os.truncate(path, 0)
    try:
        os.kill(pid, SIGNAL)
    except OSError:
        return ""
    deadline, size = time.monotonic() + WAIT, -1
    while time.monotonic() < deadline:
        time.sleep(0.01)
        try:
            now = os.stat(path).st_size
        except OSError:
            return ""
        if now and now == size:
            break  # written, and no more coming
        size = now
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            found = _FRAME.search(f.read(1 << 16))
    except OSError:
        return ""
    return f"{found[1]}:{found[2]}" if found else ""


def timed_out(limit: float, reached: str) -> str:
    """The message of a job stopped at its timeout."""
    where = f": it was at {reached} when stopped" if reached else " and was stopped"
    return f"the snippet did not finish within {limit:.3g} s (timeout){where}"


def is_timeout(error: str) -> bool:
    """Whether a job's error is `timed_out`'s."""
    return error.startswith("the snippet did not finish within ") and " s (timeout)" in error

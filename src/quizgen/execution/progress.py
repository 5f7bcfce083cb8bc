"""How far a long job is, told while it runs: the job's process writes, its worker relays.

A job's process has a pipe of its own for this (isolate.py). It writes fixed records of three unsigned
64-bit numbers (what it is doing, how much is done, of how much); the worker keeps the last whole
record it read and hands it on to the zygote, and the zygote to quizgen, which shows it on the progress
line (terminal.py). The job's code is the card's too, so a record may be made up: it is read as three
numbers, clamped, about that job alone, and never more than shown.
"""

from __future__ import annotations

import contextlib
import os
import struct
import time

RECORD = struct.Struct("<3Q")
EVERY = 0.5  # seconds between two records a job writes
PHASES = ("the accepted orders", "the distractors")  # what an order search is doing, by number
LIMIT = 1 << 48  # numbers past this are shown as this (a made-up record is only ever a number)

_fd: int | None = None  # the job process's end of its pipe (None: nobody listens)
_last = 0.0


def listen(fd: int | None) -> None:
    """In the job's process: write records to `fd` from now on."""
    global _fd, _last
    _fd, _last = fd, 0.0


def report(phase: int, done: int, total: int) -> None:
    """How far the job is (at most one record every EVERY seconds; never blocks, never fails)."""
    global _last
    if _fd is None:
        return
    now = time.monotonic()
    if now - _last < EVERY:
        return
    _last = now
    with contextlib.suppress(OSError, struct.error):  # nobody reads, or the pipe is full: only a hint
        os.write(_fd, RECORD.pack(phase, max(0, min(done, LIMIT)), max(0, min(total, LIMIT))))


def last_record(data: bytes) -> tuple[int, int, int] | None:
    """The last whole record in what was read (the worker's side), clamped; None when there is none."""
    whole = len(data) // RECORD.size * RECORD.size
    if not whole:
        return None
    phase, done, total = RECORD.unpack_from(data, whole - RECORD.size)
    return min(phase, len(PHASES)), min(done, LIMIT), min(total, LIMIT)

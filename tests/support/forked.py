"""Run code in a fork of this process: for test code that must not act on the test process itself
(isolate.reap_all ends every child of its caller, here the session's worker pool and browser), and for
the bench's searches, each timed in a process of its own (bench/orders.py)."""

from __future__ import annotations

import os
from collections.abc import Callable


def in_a_fork(work: Callable[[], str]) -> str:
    """What `work` returns, run in a fork of this process ("" when it raised: the child ends at once,
    printing nothing)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        os.close(read)
        try:
            os.write(write, work().encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as told:
        text = told.read()
    os.waitpid(pid, 0)
    return text

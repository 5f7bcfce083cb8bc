"""The job-process helpers of a worker (execution/worker/isolate.py)."""

from __future__ import annotations

import os
import subprocess
import sys


def test_reap_all_refuses_outside_a_worker() -> None:
    # reap_all ends every child of the calling process: called by mistake in any other process (once,
    # the test process, whose children were the session's worker pool and browser) it took those down.
    # Run in a fork all the same, so a guard that fails cannot end this session's children.
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        os.close(read)
        told = "no error"
        try:
            from quizgen.execution.worker import isolate

            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
            try:
                isolate.reap_all(None)
            except RuntimeError as exc:
                told = str(exc)
            told += " | alive" if child.poll() is None else " | ended"
            child.kill()
            child.wait()
        finally:
            os.write(write, told.encode())
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        told = f.read()
    os.waitpid(pid, 0)
    assert told == "reap_all is for a worker's process (isolate.become_subreaper first) | alive"

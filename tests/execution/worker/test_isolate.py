"""The job-process helpers of a worker (execution/worker/isolate.py)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.forked import in_a_fork


def _reap_all_outside_a_worker() -> str:
    from quizgen.execution.worker import isolate

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    told = "no error"
    try:
        isolate.reap_all(None)
    except RuntimeError as exc:
        told = str(exc)
    told += " | alive" if child.poll() is None else " | ended"
    child.kill()
    child.wait()
    return told


def test_reap_all_refuses_outside_a_worker() -> None:
    # reap_all ends every child of the calling process: called by mistake in any other process (once,
    # the test process, whose children were the session's worker pool and browser) it took those down.
    # Run in a fork all the same, so a guard that fails cannot end this session's children.
    told = in_a_fork(_reap_all_outside_a_worker)
    assert told == "reap_all is for a worker's process (isolate.become_subreaper first) | alive"

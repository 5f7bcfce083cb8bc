"""A worker process's life: forked from the zygote, it runs jobs one after another until told to stop,
each in a child process of its own (isolate.run_isolated), under a memory cap.

The worker itself never runs a snippet: a job's process is forked from it, answers on a pipe made for
that job alone and is ended, with every process it started, before the next job begins. So no card's
code can answer for another card's job or change what a later job computes, and a result is only ever
taken from the process that ran that job (and nothing else).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import resource
import signal
import traceback
from collections.abc import Callable

from quizgen.constants import FILE_LIMIT, INTERNAL_ERROR_EXIT, RETIRE_AFTER_JOBS
from quizgen.execution.protocol import Result, WorkerTask
from quizgen.execution.sandbox.libc import prctl


def _limit_resources(memory: int) -> None:
    with open("/proc/self/statm") as f:
        vsize = int(f.read().split()[0]) * resource.getpagesize()
    cap = vsize + memory
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write raises instead of killing


def _die_with_parent() -> None:
    """Ask Linux to kill this worker when the zygote goes, so no snippet outlives a build."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _send_result(write_fd: int, result: Result) -> None:
    data = memoryview((json.dumps(result) + "\n").encode())
    while data:
        data = data[os.write(write_fd, data) :]


def _children_cpu() -> float:
    """CPU seconds of the worker's ended children: a job's process and every process it started."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _warm(features: frozenset[str]) -> None:
    """Make these first uses here, for this worker's jobs alone; what they made stays out of the
    collector's reach in every job's process (as the zygote's own warm-up does)."""
    from quizgen.execution.worker import runner, warm

    warm.on_demand(sorted(features))
    runner.reset_state()
    gc.collect()
    gc.freeze()


def _relay(write_fd: int) -> Callable[[tuple[int, int, int]], None]:
    """Hand a job's progress on to the zygote, as a line before its result (progress.py)."""

    def relay(record: tuple[int, int, int]) -> None:
        os.write(write_fd, (json.dumps({"progress": list(record)}) + "\n").encode())

    return relay


def live(
    read_fd: int, write_fd: int, workdir: str, memory: int, features: frozenset[str] = frozenset()
) -> None:
    """The worker's life: run jobs, each in a child, until told to stop or worn out. Never returns.
    A worker with `features` makes those first uses first (warm.APART), and then says so.

    stdin and stdout go to /dev/null (stdout is the zygote's reply pipe); stderr stays the pool's, so
    what quizgen itself writes there is kept for the report of a quizgen bug (a job's process sends its
    stderr to /dev/null: a snippet cannot write into that report).
    """
    from quizgen.execution.worker import isolate

    status = 0
    try:
        _die_with_parent()
        isolate.become_subreaper()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1):
            os.dup2(devnull, fd)
        os.close(devnull)
        if features:
            _warm(features)
            os.write(write_fd, b'{"warmed": true}\n')
        _limit_resources(memory)
        requests = os.fdopen(read_fd, "rb")
        for done in range(1, RETIRE_AFTER_JOBS + 1):
            line = requests.readline()
            if not line:
                break
            task: WorkerTask = json.loads(line)
            before = _children_cpu()
            result = isolate.run_isolated(task["job"], workdir, task["timeout"], _relay(write_fd))
            # measured here, not told by the job's process (whose record a snippet may write)
            result["cpu"] = round(_children_cpu() - before, 4)
            result["retire"] = done == RETIRE_AFTER_JOBS  # the zygote must not hand this worker another job
            _send_result(write_fd, result)
    except BaseException:
        traceback.print_exc()  # onto the pool's stderr: the zygote reports it as a quizgen bug
        status = INTERNAL_ERROR_EXIT
    finally:
        os._exit(status)

"""A worker process's life: forked from the zygote, it runs jobs one after another until told to stop,
worn out or contaminated, each in a fresh namespace and a fresh temporary folder, under a memory cap.

Only worker processes run this (it imports torch through the runner). After each job it puts back what
torch leaves changed in ordinary use and asks the contamination watch whether the job changed state a
later job would see: such a job is the worker's last (its result still stands: it ran from the clean
state).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import stat
import tempfile
import traceback

from quizgen import trees
from quizgen.constants import FILE_LIMIT, INTERNAL_ERROR_EXIT, RETIRE_AFTER_JOBS
from quizgen.execution import process_groups, stuck
from quizgen.execution.contamination import Watch
from quizgen.execution.protocol import Result, WorkerTask


def _limit_resources(memory: int) -> None:
    with open("/proc/self/statm") as f:
        vsize = int(f.read().split()[0]) * resource.getpagesize()
    cap = vsize + memory
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write raises instead of killing


def _die_with_parent() -> None:
    """Ask Linux to kill this worker when the zygote goes, so no snippet outlives a build."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _send_result(write_fd: int, result: Result) -> None:
    data = memoryview((json.dumps(result) + "\n").encode())
    while data:
        data = data[os.write(write_fd, data) :]


_spare: list[str] = []  # a job folder the last job left as it found it, for the next job


def _run_in_place(task: WorkerTask, workdir: str) -> Result:
    """Run a job in this worker (its timeout is the zygote's to enforce), then end what it started."""
    from quizgen.execution import isolate, runner

    jobdir = _spare.pop() if _spare else tempfile.mkdtemp(dir=workdir)
    os.chdir(jobdir)
    try:
        return runner.execute_job(task["job"])
    finally:
        # What the next job starts by putting back anyway (default dtype, grad mode, ...): put back now,
        # so the watch does not take a card that leaves a setting changed for one a later card sees. (A
        # card that replaced torch's setters makes this fail: the watch sees the patch and names it.)
        with contextlib.suppress(Exception):
            runner.reset_state()
        os.chdir(workdir)
        isolate.reap_all(None)
        _leave(jobdir)


def _leave(jobdir: str) -> None:
    """Keep a job's folder for the next job when it is as fresh as a new one (empty, private, a real
    folder); else remove it. Removing a folder costs ~3 ms on some file systems: more than most snippets."""
    try:
        mode = os.lstat(jobdir).st_mode
        with os.scandir(jobdir) as entries:
            empty = next(entries, None) is None
        if empty and stat.S_ISDIR(mode) and stat.S_IMODE(mode) == 0o700:
            _spare.append(jobdir)
            return
    except OSError:
        pass
    trees.remove(jobdir)  # (a snippet may nest folders deeper than rmtree recurses)


def live(read_fd: int, write_fd: int, workdir: str, memory: int, watch: Watch | None) -> None:
    """The worker's life: run jobs until told to stop, worn out or contaminated. Never returns.

    With a `watch`, jobs run here one after another and a job that changed a shared namespace is this
    worker's last; without one (the namespaces cannot be watched cheaply), each job runs in a child.
    stdin and stdout go to /dev/null (stdout is the zygote's reply pipe); stderr stays the pool's, so
    what quizgen itself writes there is kept for the report of a quizgen bug.
    """
    from quizgen.execution import isolate

    status = 0
    try:
        _die_with_parent()
        isolate.become_subreaper()
        isolate.claim_jobs()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1):
            os.dup2(devnull, fd)
        _limit_resources(memory)
        if watch is not None:
            stuck.arm(workdir)  # jobs run here: where one was, should its timeout strike
            shutil.rmtree(tempfile.mkdtemp(dir=workdir))  # what a job's folder sets up in tempfile
            watch.accept()  # forking and this set-up rewrote a few namespaces (threading, tempfile)
        requests = os.fdopen(read_fd, "rb")
        for done in range(1, RETIRE_AFTER_JOBS + 1):
            line = requests.readline()
            if not line:
                break
            task: WorkerTask = json.loads(line)
            if watch is None:
                result = isolate.run_isolated(task["job"], workdir, task["timeout"])
            else:
                result = _run_in_place(task, workdir)
                watch.restore()
                changed = watch.changed()
                if changed:
                    result["contaminated"] = changed
                if process_groups.gloo_threads():  # a group still held: it must not end in this process
                    result["retire"] = True
                if watch.imported():  # quietly: an import is no fault, but the next card must not see it
                    result["retire"] = True
            retire = done == RETIRE_AFTER_JOBS or bool(result.get("retire") or result.get("contaminated"))
            result["retire"] = retire  # the zygote must not hand this worker another job
            _send_result(write_fd, result)
            if retire:
                break
    except BaseException:
        traceback.print_exc()  # onto the pool's stderr: the zygote reports it as a quizgen bug
        status = INTERNAL_ERROR_EXIT
    finally:
        os._exit(status)

"""One job, one process: a worker forks a child per job, so no job can see what another changed, nor
answer for another.

The child closes every file descriptor it inherited but its own result and progress pipes (made for this
job alone) before the job runs, so a snippet cannot read the worker's next job or write a result for it,
nor reach any other pipe or process handle of the pool. It leads its own process group and the worker is
a child subreaper, so every process a snippet starts (subprocess, os.fork, even setsid) is killed when
the job ends. The worker enforces the job's timeout itself and reads at most RESULT_LIMIT bytes of the
result: a grandchild holding that pipe cannot stall the build, nor a giant record exhaust memory.
Each job has its own working, temporary and home folders (TMPDIR, HOME), removed when it ends, so what
a library caches there (torch's compile cache, hub downloads) is not seen by a later job.
Whatever escapes (a process started while its worker was being killed) is ended when the pool ends:
the sandbox's PID namespace ends with it.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import tempfile
import time
import traceback
from collections.abc import Callable

from quizgen.constants import RESULT_LIMIT
from quizgen.execution import progress, records
from quizgen.execution.protocol import Job, Result
from quizgen.execution.sandbox import landlock
from quizgen.execution.sandbox.libc import prctl
from quizgen.execution.worker import stuck
from quizgen.execution.worker.owner import claim_jobs
from quizgen.project import trees

_PR_SET_CHILD_SUBREAPER = 36
Progress = Callable[[tuple[int, int, int]], None]  # (phase, done, total): progress.py

CONFINE = False  # in the sandbox: each job has its own TMPDIR and HOME, and writes only beneath its folder


_subreaper = False  # whether this process is a worker that may end every child it has (reap_all)


def become_subreaper() -> None:
    """Orphans of this process's children become its children, so none escapes `reap_all`."""
    global _subreaper
    with contextlib.suppress(OSError, AttributeError):  # not Linux: no subreaper
        prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _subreaper = True


def describe_exit(status: int) -> str:
    """Why a job's process ended without a result."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == signal.SIGKILL:
            return "the snippet was killed (SIGKILL), most likely for using too much memory"
        return f"the snippet crashed the worker process ({name})"
    return f"the snippet ended the worker process (exit status {os.WEXITSTATUS(status)}) before finishing"


def _own_fds_only(*keep: int) -> None:
    """Close every inherited file descriptor but 0-2 and `keep`; 0-2 become /dev/null."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    low = 3
    for fd in sorted(keep):  # close_range(2) around each: one call a range, however many are open
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))


def _child(job: Job, jobdir: str, write_fd: int, progress_fd: int) -> None:
    """The job's process: run it, send the result, end. Never returns."""
    try:
        _own_fds_only(write_fd, progress_fd)
        os.set_blocking(progress_fd, False)  # (a full pipe drops a record: it never holds the job up)
        progress.listen(progress_fd)
        claim_jobs()
        os.setpgid(0, 0)
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: end with the worker
        if CONFINE:  # in the sandbox; with --sandbox=off a snippet has the user's $HOME, as asked
            for name, env in (("tmp", "TMPDIR"), ("home", "HOME")):
                os.mkdir(os.path.join(jobdir, name), 0o700)
                os.environ[env] = os.path.join(jobdir, name)
            tempfile.tempdir = None  # found again from TMPDIR
        os.mkdir(os.path.join(jobdir, "work"), 0o700)
        os.chdir(os.path.join(jobdir, "work"))
        stuck.arm(os.path.dirname(jobdir))  # where it was, should its timeout strike
        if CONFINE:
            landlock.confine([jobdir, "/dev/shm"])
        from quizgen.execution.worker import runner

        result = runner.execute_job(job, reset=False)  # forked from the zygote's reset state
        data = (json.dumps(result) + "\n").encode()
    except BaseException:  # quizgen's own failure (a snippet's exceptions never get here)
        internal: Result = {"ok": False, "output": "", "internal": traceback.format_exc()}
        data = (json.dumps(internal) + "\n").encode()
    try:
        # The snippet may have made its pipe non-blocking: a full pipe then lost the record, and which
        # error its card got depended on the machine's pace.
        os.set_blocking(write_fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view) :]
    finally:
        os._exit(0)


def _read_result(
    read_fd: int, pid: int, timeout: float, progress_fd: int, on_progress: Progress | None
) -> tuple[bytes, bool]:
    """The child's result line (or what came of it) and whether the timeout struck; what it says of its
    progress meanwhile goes to `on_progress`."""
    deadline = time.monotonic() + timeout
    pidfd = os.pidfd_open(pid)
    data = bytearray()
    told = bytearray()  # progress records read (a part of one kept for the next read)
    watched = [read_fd, pidfd, progress_fd]
    try:
        while not data.endswith(b"\n") and len(data) <= RESULT_LIMIT:
            left = deadline - time.monotonic()
            if left <= 0:
                return bytes(data), True
            ready, _, _ = select.select(watched, [], [], left)
            if progress_fd in ready:
                chunk = os.read(progress_fd, 1 << 12)
                if not chunk:  # closed by the job (its own business): its result is all that is left
                    watched.remove(progress_fd)
                    continue
                told += chunk
                record = progress.last_record(bytes(told))
                del told[: len(told) // progress.RECORD.size * progress.RECORD.size]
                if record is not None and on_progress is not None:
                    on_progress(record)
                continue
            if read_fd in ready:
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    break
                data += chunk
            elif pidfd in ready:
                os.set_blocking(read_fd, False)  # the child is gone: take what it wrote, wait no more
                try:
                    while len(data) <= RESULT_LIMIT and (chunk := os.read(read_fd, 1 << 16)):
                        data += chunk
                except BlockingIOError:
                    pass
                break
    finally:
        os.close(pidfd)
    return bytes(data), False


def _record(data: bytes) -> Result:
    """The job's result record, or the card's error when its process sent something else (its snippet
    wrote into its own result pipe: the card speaks only for itself, and is told so)."""
    try:
        return records.parse(data)
    except records.Malformed as exc:
        why = str(exc)
        if not why.startswith("its result"):
            why = f"the snippet wrote into its job's result pipe ({why})"
        return {"ok": False, "output": "", "error": why}


def reap_orphans(keep: set[int]) -> None:
    """Kill and reap every child but `keep` (orphans of a killed worker that came to this subreaper),
    and the orphans those leave in turn."""
    while orphans := [pid for pid in _children() if pid not in keep]:
        for pid in orphans:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in orphans:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def reap_all(group: int | None) -> None:
    """Kill the job's process group (if any) and every descendant left, and wait for them all."""
    if not _subreaper:  # it ends EVERY child of this process: anywhere but a worker, someone else's
        raise RuntimeError("reap_all is for a worker's process (isolate.become_subreaper first)")
    if group is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    while True:
        children = _children()
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            pid, _ = os.waitpid(-1, 0 if children else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0 and not children:
            return


def _children() -> list[int]:
    pids: list[int] = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as f:
                pids += [int(p) for p in f.read().split()]
    except OSError:  # pragma: no cover - no /proc
        pass
    return pids


def run_isolated(job: Job, workdir: str, timeout: float, on_progress: Progress | None = None) -> Result:
    """Run one job in a child process of its own, in a fresh folder, within `timeout` seconds; what it
    tells of its progress goes to `on_progress`."""
    jobdir = tempfile.mkdtemp(dir=workdir)
    read_fd, write_fd = os.pipe()
    told_fd, tell_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        os.close(told_fd)
        _child(job, jobdir, write_fd, tell_fd)
    os.close(write_fd)
    os.close(tell_fd)
    try:
        data, timed_out = _read_result(read_fd, pid, timeout, told_fd, on_progress)
    finally:
        os.close(read_fd)
        os.close(told_fd)
    # Past RESULT_LIMIT the record is refused unread (records.parse); either way the process is done.
    answered = data.endswith(b"\n") or len(data) > RESULT_LIMIT
    reached = stuck.ask(pid, workdir) if timed_out and not answered else ""
    if answered or timed_out:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # done, or never will be: it has nothing more to say
    _, status = os.waitpid(pid, 0)
    reap_all(pid)
    trees.remove(jobdir)
    if answered:
        return _record(data)
    if timed_out:
        return {"ok": False, "output": "", "error": stuck.timed_out(timeout, reached)}
    return {"ok": False, "output": "", "error": describe_exit(status)}

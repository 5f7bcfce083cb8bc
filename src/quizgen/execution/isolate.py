"""One job, one process: a worker forks a child per job, so no job can see what another changed.

A card that patches torch (say `torch.optim.Optimizer.zero_grad`) changes only its own child; the
worker stays as it was warmed up. The child leads its own process group and the worker is a child
subreaper, so every process a snippet starts (subprocess, os.fork, even setsid) is killed when the
job ends. The worker enforces the job's timeout itself and reads the result from a pipe that only
the child may answer on: a grandchild holding that pipe cannot stall the build.

Workers run jobs in place where the contamination watch allows (worker.py), and then the same
reaping (`reap_all`) ends a job's processes. Whatever escapes both (a process started while its
worker was being killed) is ended when the pool ends: in the sandbox the zygote is PID 1 of the
pool's PID namespace, and the kernel kills every process in a namespace whose PID 1 has exited.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import tempfile
import time
import traceback

from quizgen import trees
from quizgen.execution import stuck
from quizgen.execution.owner import claim_jobs
from quizgen.execution.protocol import Job, Result

_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    """Orphans of this process's children become its children, so none escapes `reap_all`."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: no subreaper
        ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1)


def describe_exit(status: int) -> str:
    """Why a job's process ended without a result."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == signal.SIGKILL:
            return "the snippet was killed (SIGKILL), most likely for using too much memory"
        return f"the snippet crashed the worker process ({name})"
    return f"the snippet ended the worker process (exit status {os.WEXITSTATUS(status)}) before finishing"


def _child(job: Job, jobdir: str, write_fd: int) -> None:
    """The job's process: run it, send the result, end. Never returns."""
    from quizgen.execution import runner  # imports torch: only in the job's process

    try:
        claim_jobs()
        os.setpgid(0, 0)
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: end with the worker
        os.chdir(jobdir)
        stuck.arm(os.path.dirname(jobdir))  # where it was, should its timeout strike
        result = runner.execute_job(job)
        data = (json.dumps(result) + "\n").encode()
    except BaseException:  # quizgen's own failure (a snippet's exceptions never get here)
        internal: Result = {"ok": False, "output": "", "internal": traceback.format_exc()}
        data = (json.dumps(internal) + "\n").encode()
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view) :]
    finally:
        os._exit(0)


def _read_result(read_fd: int, pid: int, timeout: float) -> tuple[bytes, bool]:
    """The child's result line (or what came of it) and whether the timeout struck."""
    deadline = time.monotonic() + timeout
    pidfd = os.pidfd_open(pid)
    data = bytearray()
    try:
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                return bytes(data), True
            ready, _, _ = select.select([read_fd, pidfd], [], [], left)
            if read_fd in ready:
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    break
                data += chunk
            elif pidfd in ready:
                os.set_blocking(read_fd, False)  # the child is gone: take what it wrote, wait no more
                try:
                    while chunk := os.read(read_fd, 1 << 16):
                        data += chunk
                except BlockingIOError:
                    pass
                break
    finally:
        os.close(pidfd)
    return bytes(data), False


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


def run_isolated(job: Job, workdir: str, timeout: float) -> Result:
    """Run one job in a child process of its own, in a fresh folder, within `timeout` seconds."""
    jobdir = tempfile.mkdtemp(dir=workdir)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(job, jobdir, write_fd)
    os.close(write_fd)
    try:
        data, timed_out = _read_result(read_fd, pid, timeout)
    finally:
        os.close(read_fd)
    status = 0
    if not timed_out:
        _, status = os.waitpid(pid, 0)
    reached = stuck.ask(pid, workdir) if timed_out and not data.endswith(b"\n") else ""
    reap_all(pid)
    trees.remove(jobdir)
    if data.endswith(b"\n"):
        result: Result = json.loads(data)
        return result
    if timed_out:
        return {"ok": False, "output": "", "error": stuck.timed_out(timeout, reached)}
    return {"ok": False, "output": "", "error": describe_exit(status)}

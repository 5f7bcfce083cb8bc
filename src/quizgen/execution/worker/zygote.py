"""The worker pool process: with the modules it runs jobs with, the only code that imports torch.

`python -m quizgen.execution.worker.zygote` (the zygote) imports torch once, warms it up and forks
worker processes from that warm state. Jobs arrive as JSON lines on stdin; the zygote hands each to an idle
worker, enforces its wall-clock timeout, notices a worker that crashed or exited, replaces it, and writes
results as JSON lines to stdout. Workers run jobs one after another, each in a process of its own
(isolate.py) with torch's global settings and seeds reset, under a memory cap; no worker nor the
zygote ever runs card code. The zygote stays single-threaded, because forking a process that has
started torch's thread pools hangs the child. It ends when its stdin closes or the process that started
it is gone (a build killed with SIGKILL leaves no pool behind), and then kills every process left; in
the sandbox, bwrap's PID namespace ends every process in it as well.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import sys
import tempfile
import time

from quizgen.constants import (
    DEFAULT_MEMORY,
    DEFAULT_TIMEOUT,
    ORDER_TIMEOUT_FACTOR,
)
from quizgen.execution import warming
from quizgen.execution.protocol import Reply, Request, Result, WorkerTask
from quizgen.execution.worker import isolate, life, startup, stuck, warm
from quizgen.project import trees

WORKER_GRACE = 10.0


# -- the zygote -----------------------------------------------------------------------------------


class _Worker:
    def __init__(self, pid: int, to_fd: int, from_fd: int, workdir: str) -> None:
        self.pid = pid
        self.pidfd: int | None = None  # readable once the worker has ended (None where Linux has no pidfd)
        self.to_fd = to_fd
        self.from_fd = from_fd
        self.workdir = workdir
        self.data = bytearray()
        self.job_id: str | None = None
        self.deadline = 0.0
        self.limit = 0.0
        self.timed_out = False
        self.cancelled = False
        self.retiring = False
        self.features: frozenset[str] = frozenset()  # first uses it made for its jobs (warming.apart)
        self.warming = False  # making them: no job yet

    @property
    def busy(self) -> bool:
        return self.job_id is not None or self.warming


def _worker_death(status: int, worker: _Worker) -> Result:
    """A worker ended while it had a job: quizgen's fault (its jobs run in children of their own), unless
    it overran the job's timeout and grace, or a snippet killed it."""
    if worker.timed_out:
        return {"ok": False, "output": "", "error": stuck.timed_out(worker.limit, "")}
    if os.WIFSIGNALED(status):  # another card's snippet may send it a signal: that card's own job fails
        killed = isolate.describe_exit(status).replace("snippet", "job", 1)
        return {"ok": False, "output": "", "error": killed}
    why = isolate.describe_exit(status).replace("the snippet", "the worker process", 1)
    return {"ok": False, "output": "", "internal": why + " (its stderr may say why)"}


class _Zygote:
    def __init__(
        self,
        jobs: int,
        timeout: float,
        memory: int,
        torch_version: str,
        parent: int | None = None,
    ) -> None:
        self.parent = parent  # a pidfd of quizgen's process: readable once it has ended
        self.jobs, self.timeout, self.memory = jobs, timeout, memory
        self.torch_version = torch_version
        self.sel = selectors.DefaultSelector()
        self.workers: dict[int, _Worker] = {}  # by from_fd
        self.pending: list[Request] = []
        self.warming: list[str] = []  # first uses asked for and not made yet (warm_when_idle)
        self.apart: frozenset[str] = frozenset()  # first uses asked for, made in workers of their own
        self.apart_left: dict[str, int] = {}  # the jobs needing each not handed out yet
        self.uses: dict[str, frozenset[str]] = {}  # a pending job's first uses (warming.uses), by id
        self.out = sys.stdout.buffer
        self.cancel_pending = False

    def send(self, message: Reply) -> None:
        self.out.write((json.dumps(message) + "\n").encode())
        self.out.flush()

    def spawn(self, features: frozenset[str] = frozenset()) -> _Worker:
        workdir = tempfile.mkdtemp(prefix="quizgen-")
        to_read, to_write = os.pipe()
        from_read, from_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            # Other workers' pipe ends must not stay open here, or their EOFs would never come.
            for w in self.workers.values():
                os.close(w.to_fd)
                os.close(w.from_fd)
            os.close(to_write)
            os.close(from_read)
            life.live(to_read, from_write, workdir, self.memory, features)
        os.close(to_read)
        os.close(from_write)
        os.set_blocking(from_read, False)
        worker = _Worker(pid, to_write, from_read, workdir)
        worker.features, worker.warming = features, bool(features)
        self.workers[from_read] = worker
        self.sel.register(from_read, selectors.EVENT_READ, worker)
        # Its end is noticed when it ends, not when its pipe closes: a process its snippet forked may
        # hold the pipe open for as long as it likes.
        with contextlib.suppress(OSError, AttributeError):  # not Linux, or before 5.3: the pipe only
            worker.pidfd = os.pidfd_open(pid)
            self.sel.register(worker.pidfd, selectors.EVENT_READ, _Ended(worker))
        return worker

    def assign(self, worker: _Worker, message: Request) -> None:
        job = message["job"]
        factor = ORDER_TIMEOUT_FACTOR if job["type"] == "search" else 1
        worker.limit = float(message.get("timeout", self.timeout)) * factor
        # The worker stops its job's process at the limit itself; the zygote stops a worker that does not.
        worker.deadline = time.monotonic() + worker.limit + WORKER_GRACE
        worker.job_id = message["id"]
        worker.timed_out = worker.cancelled = False
        worker.data.clear()
        self.send({"id": message["id"], "started": True})
        with contextlib.suppress(OSError):  # it died just now; its EOF reports the job
            task: WorkerTask = {"job": job, "timeout": worker.limit}
            os.write(worker.to_fd, (json.dumps(task) + "\n").encode())

    def dispatch(self) -> None:
        for worker in [w for w in self.workers.values() if w.job_id is None and w.retiring]:
            os.kill(worker.pid, signal.SIGKILL)  # worn out, or forked before a warm-up: replaced
            self.bury(worker)
        # (a core left for the warm-up to come: warm_when_idle)
        room = self.jobs - bool(self.warming) - sum(w.busy for w in self.workers.values())
        waiting = [m for m in self.pending if not self._waits(m)]
        # Those that need a first use apart first: their worker makes it on a core of its own from the
        # start, as the others take the longest jobs, and takes them before any other job.
        for message in sorted(waiting, key=lambda m: not self._needs(m)):
            if room <= 0:
                break
            needs = self._needs(message)
            chosen = self._idle_for(needs)
            if chosen is None:
                if needs and any(needs <= w.features for w in self.workers.values() if not w.retiring):
                    continue  # its worker is busy, or making them
                if not self._make_room():
                    continue
                chosen = self.spawn(needs)
                if needs:  # it makes them first, then takes this job or another that needs them
                    room -= 1
                    continue
            self.pending.remove(message)
            for feature in needs:
                self.apart_left[feature] = self.apart_left.get(feature, 0) - 1
            self.uses.pop(message["id"], None)
            self.assign(chosen, message)
            room -= 1

    def _needs(self, message: Request) -> frozenset[str]:
        """The first uses apart the job may make (a worker that made them runs it)."""
        return self.apart & self._uses(message) if self.apart else frozenset()

    def _uses(self, message: Request) -> frozenset[str]:
        if (found := self.uses.get(message["id"])) is None:  # (read once: dispatch asks on every event)
            found = self.uses[message["id"]] = frozenset(warming.uses(message["job"]))
        return found

    def _idle_for(self, needs: frozenset[str]) -> _Worker | None:
        """An idle worker that made the first uses a job needs; the one that made the fewest."""
        idle = [w for w in self.workers.values() if not w.busy and not w.retiring and needs <= w.features]
        return min(idle, key=lambda w: len(w.features), default=None)

    def _make_room(self) -> bool:
        """Whether a worker may be forked: one fewer than --jobs, or an idle one ended for it."""
        if sum(not w.retiring for w in self.workers.values()) < self.jobs:
            return True
        idle = [w for w in self.workers.values() if not w.busy and not w.retiring]
        if not idle:
            return False
        spare = min(idle, key=lambda w: len(w.features))
        os.kill(spare.pid, signal.SIGKILL)
        self.bury(spare)
        return True

    def _waits(self, message: Request) -> bool:
        """Whether the job may make a first use still to be warmed (it starts once that is made)."""
        return bool(self.warming) and not self._uses(message).isdisjoint(self.warming)

    def warm_when_idle(self) -> None:
        """Make the first uses asked for once every core but one is busy, or a job waits for them: jobs that
        need none start first, and the warm-up (~0.9 s of CPU for `torch.compile`) runs on the core left,
        not while every core waits, nor beside a job on each (searches time their choices: scheduling.py)."""
        busy = sum(w.busy for w in self.workers.values())
        if self.warming and (busy >= self.jobs - 1 or any(self._waits(m) for m in self.pending)):
            features, self.warming = self.warming, []
            self.warm_up(features)
            self.dispatch()

    def reply(self, worker: _Worker, result: Result) -> None:
        worker.retiring = worker.retiring or bool(result.pop("retire", False))
        # Its first uses' jobs all handed out: lean workers take the rest (its forks copy what it made).
        worker.retiring |= bool(worker.features) and all(
            self.apart_left.get(f, 0) <= 0 for f in worker.features
        )
        result["torch_version"] = self.torch_version
        if not worker.cancelled:
            self.send({"id": worker.job_id or "", "result": result})
        worker.job_id = None

    def readable(self, worker: _Worker) -> None:
        try:
            chunk = os.read(worker.from_fd, 1 << 16)
        except BlockingIOError:
            return
        if chunk:
            worker.data += chunk
            self.answered(worker)
            return
        self.bury(worker)

    def answered(self, worker: _Worker) -> None:
        """Send the worker's result once a whole one has come; what it tells of its job's progress
        before that, as it comes."""
        while b"\n" in worker.data and worker.busy:
            line, _, rest = bytes(worker.data).partition(b"\n")
            worker.data[:] = rest
            message = json.loads(line)
            if worker.warming:  # its first line: it made its first uses (life.live)
                worker.warming = False
                continue
            if "progress" in message:  # (the worker's line: a job's own record was read as 3 numbers)
                if not worker.cancelled:
                    self.send({"id": worker.job_id or "", "progress": message["progress"]})
                continue
            result: Result = message
            self.reply(worker, result)

    def ended(self, worker: _Worker) -> None:
        """The worker process ended (its pidfd): take what it wrote before, then bury it."""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(worker.from_fd, 1 << 16):
                worker.data += chunk
        self.answered(worker)
        self.bury(worker)

    def bury(self, worker: _Worker) -> None:
        """A worker ended or its pipe closed: it retired, crashed, was killed, or ended itself. What its
        jobs started (orphans that came to this subreaper) is killed now."""
        self.sel.unregister(worker.from_fd)
        os.close(worker.from_fd)
        os.close(worker.to_fd)
        if worker.pidfd is not None:
            self.sel.unregister(worker.pidfd)
            os.close(worker.pidfd)
        del self.workers[worker.from_fd]
        _, status = os.waitpid(worker.pid, 0)
        isolate.reap_orphans(keep={w.pid for w in self.workers.values()})
        trees.remove(worker.workdir)  # (a snippet may nest folders deeper than rmtree recurses)
        if worker.job_id is not None:
            self.reply(worker, _worker_death(status, worker))
        elif worker.warming:  # it died making them (quizgen's bug, on its stderr): jobs make their own
            self.apart -= worker.features

    def command(self, message: Request) -> None:
        if message.get("cancel"):
            # The parent stopped early (--fail-fast): drop what is queued and stop what runs.
            self.pending.clear()
            self.uses.clear()
            for worker in self.workers.values():
                if worker.job_id is not None:
                    worker.cancelled = True
                    os.kill(worker.pid, signal.SIGKILL)
            self.cancel_pending = True
        elif "warm" in message:
            asked, apart = warm.not_made(message["warm"]), message.get("apart", {})
            self.warming += [f for f in asked if f not in self.warming and f not in apart]
            self.apart = frozenset(apart).intersection(asked)  # (this run's: the zygote may make it now)
            self.apart_left = dict(apart)
        else:
            self.pending.append(message)

    def warm_up(self, features: list[str]) -> None:
        """Make torch's first uses that jobs to come share (execution/warming.py), once; the workers
        forked before are replaced as they finish, so that each of those jobs starts warm."""
        if not warm.on_demand(features):
            return  # warm already, or this torch has none of them
        from quizgen.execution.worker import runner

        runner.reset_state()
        startup.settle()
        for worker in self.workers.values():
            worker.retiring = True

    def serve(self) -> None:
        stdin_fd = sys.stdin.fileno()
        os.set_blocking(stdin_fd, False)
        self.sel.register(stdin_fd, selectors.EVENT_READ, None)
        if self.parent is not None:
            self.sel.register(self.parent, selectors.EVENT_READ, _PARENT)
        inbuf = bytearray()
        while True:
            busy = [w for w in self.workers.values() if w.job_id is not None]
            if self.cancel_pending and not busy:
                self.send({"cancelled": True})
                self.cancel_pending = False
            self.dispatch()
            self.warm_when_idle()
            now = time.monotonic()
            wait = min((w.deadline for w in busy), default=now + 1.0) - now
            for key, _ in self.sel.select(timeout=max(0.0, min(wait, 1.0))):
                if key.data is _PARENT:
                    return  # quizgen is gone (killed, say): nothing will read a result
                if isinstance(key.data, _Ended):
                    if self.workers.get(key.data.worker.from_fd) is key.data.worker:
                        self.ended(key.data.worker)
                    continue
                if isinstance(key.data, _Worker):
                    if self.workers.get(key.data.from_fd) is key.data:
                        self.readable(key.data)
                    continue
                chunk = os.read(stdin_fd, 1 << 16)
                if not chunk:
                    return  # the parent is done or gone
                inbuf += chunk
                while b"\n" in inbuf:
                    line, _, rest = inbuf.partition(b"\n")
                    inbuf = bytearray(rest)
                    if line.strip():
                        self.command(json.loads(line))
            now = time.monotonic()
            for w in list(self.workers.values()):
                if w.job_id is not None and now >= w.deadline and not w.timed_out:
                    w.timed_out = True
                    os.kill(w.pid, signal.SIGKILL)
                    # At once, not at its pipe's end: a process the snippet forked may hold that open.
                    self.bury(w)

    def shutdown(self) -> None:
        for w in list(self.workers.values()):
            os.kill(w.pid, signal.SIGKILL)
            os.waitpid(w.pid, 0)
            trees.remove(w.workdir)
        isolate.reap_all(None)  # what a killed worker's jobs left came to this subreaper: end it


_PARENT = object()  # the selector's mark for quizgen's pidfd


class _Ended:
    """The selector's mark for a worker's pidfd."""

    def __init__(self, worker: _Worker) -> None:
        self.worker = worker


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="quizgen.worker")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    parser.add_argument("--memory", type=int, default=DEFAULT_MEMORY)
    parser.add_argument("--cold", action="store_true", help="skip warming up optimizers")
    parser.add_argument("--confine", action="store_true", help="each job in a Landlock domain of its own")
    args = parser.parse_args()
    # Not dumpable, before anything else: no snippet may open /proc/<pool>/mem or /proc/<pool>/fd/N of
    # the zygote, a worker or another job (each inherits this), to write results for other cards' jobs.
    startup.not_dumpable()
    parent = startup.watch_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the pool stops
    isolate.CONFINE = args.confine
    torch_version = startup.warm_up(optimizers=not args.cold)
    startup.settle()
    isolate.become_subreaper()  # orphans of a killed worker come here, to be ended
    zygote = _Zygote(max(1, args.jobs), args.timeout, args.memory, torch_version, parent)
    ready: Reply = {"ready": True, "torch_version": torch_version, "pid": os.getpid()}
    zygote.send(ready)
    try:
        zygote.serve()
    finally:
        zygote.shutdown()
        sys.stdout.flush()
    os._exit(0)  # skip torch's slow interpreter teardown: nothing is left to clean up


if __name__ == "__main__":
    main()

"""The parent side of execution: runs jobs in the worker pool and yields their results.

This module never imports torch; `quizgen.execution.worker.zygote` runs in its own process and does.
That process is started so that nothing of the project runs in it before its sandbox is entered:
in `/` (never the project), with an isolated import path (`-P -s`: no working folder or script folder,
no user site-packages; quizgen's own folder first), and an environment built from nothing
(`environment`), so no variable of the user's (tokens, keys) reaches a snippet.
A pool may run under another torch (`python`: an environment's Python, torch_versions/environments.py);
its import path then holds quizgen alone, so nothing of quizgen's own environment (its torch) is seen.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from typing import IO

import quizgen
from quizgen.constants import DEFAULT_MEMORY, DEFAULT_TIMEOUT, RESULT_LIMIT
from quizgen.errors import QuizgenError
from quizgen.execution import records, warming
from quizgen.execution.protocol import Job, Outcome, Reply, Request, Result
from quizgen.execution.sandbox import bwrap as sandbox_engine
from quizgen.execution.scheduling import Feed, Slots, longest_first
from quizgen.execution.worker.order_search import split as order_split

CANCEL_SECONDS = 30.0  # the most a cancelled pool may take to say it stopped its jobs

REPLY_LIMIT = RESULT_LIMIT + (1 << 20)  # a job's result and what the zygote adds (its id, torch version)


class WorkerCrashed(QuizgenError):
    """The worker process itself died (not a snippet): an environment problem, such as no torch."""


class ResultsTooLarge(QuizgenError):
    """The records of one run hold more values than quizgen keeps (records.BUILD_NODE_LIMIT)."""


class SandboxUnavailable(QuizgenError):
    """The sandbox cannot start here (bwrap missing or refused), and --sandbox=off was not asked for."""


def environment(imports: str | None = None) -> dict[str, str]:
    """The pool's environment: what it needs and nothing of the user's (snippets inherit it).

    `imports` replaces the import path (another torch's pool: quizgen alone, not the user's PYTHONPATH,
    which may hold a torch of its own)."""
    env = {
        "PATH": "/usr/bin:/bin",  # programs a snippet may run (`sh`, `sleep`): the system's only
        "LANG": "C.UTF-8",  # one locale everywhere: outputs do not depend on the user's
        "LC_ALL": "C.UTF-8",
        # Thread pools are sized when torch loads; one thread keeps answers bit-reproducible
        # and keeps the zygote safe to fork.
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",  # set and dict orders the same in every run
        # glibc's heap in transparent huge pages: each job's process is a fork of the warm pool, and a
        # fork (and its exit) of huge pages copies far fewer page-table entries (~7 -> ~6 ms of CPU a job)
        "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1",
        # quizgen's own folder first, then the user's PYTHONPATH (the user's setting, as any Python
        # honours it); only absolute entries, since an empty or relative one names a working folder.
        "PYTHONPATH": imports or _import_path(),
    }
    # $HOME and $TMPDIR matter only where the sandbox is off (or unavailable): it replaces both with
    # empty folders of its own. LD_LIBRARY_PATH may be what lets torch's libraries load at all (the
    # sandbox shows its folders read-only). Nothing else: no tokens, no PYTHON* settings that change
    # how snippets run, no coverage variables (a data file in the project could not be written inside).
    for name in ("HOME", "TMPDIR"):
        if name in os.environ:
            env[name] = os.environ[name]
    if libraries := _absolute(os.environ.get("LD_LIBRARY_PATH", "")):
        env["LD_LIBRARY_PATH"] = os.pathsep.join(libraries)
    return env


def _import_path() -> str:
    return os.pathsep.join(dict.fromkeys([_src(), *_absolute(os.environ.get("PYTHONPATH", ""))]))


def _src() -> str:
    return str(Path(quizgen.__file__).resolve().parent.parent)


def _absolute(paths: str) -> list[str]:
    return [p for p in paths.split(os.pathsep) if os.path.isabs(p)]


class Running:
    """The jobs a pool is running, when each started and how far it says it is (read by the progress
    line's thread while the pool's reader writes: a lock keeps each read whole)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, tuple[float, tuple[int, int, int] | None]] = {}

    def heard(self, message: Reply) -> None:
        job = message.get("id", "")
        with self._lock:
            if message.get("started"):
                self._jobs[job] = (time.monotonic(), None)
            elif job in self._jobs and len(told := message.get("progress") or []) == 3:
                self._jobs[job] = (self._jobs[job][0], (int(told[0]), int(told[1]), int(told[2])))

    def done(self, job: str) -> None:
        with self._lock:
            self._jobs.pop(job, None)

    def clear(self) -> None:
        with self._lock:
            self._jobs.clear()

    def longest(self) -> tuple[str, float, tuple[int, int, int] | None] | None:
        """The job at work the longest: its key, seconds since it started, its progress if told."""
        with self._lock:
            if not self._jobs:
                return None
            job, (began, told) = min(self._jobs.items(), key=lambda item: item[1][0])
        return job, time.monotonic() - began, told


class Pool:
    """A `python -m quizgen.execution.worker.zygote` process: it imports torch once and forks warm workers.

    A pool can serve several runs one after another (watch mode, the test suite), so torch is
    imported once for all of them.
    """

    def __init__(
        self,
        jobs: int,
        memory: int = DEFAULT_MEMORY,
        warm: bool = True,
        sandbox: str = "auto",
        python: Path | None = None,
        slots: Slots | None = None,
    ) -> None:
        self.jobs, self.memory, self.warm = jobs, memory, warm
        self.slots = slots or Slots(jobs)  # (shared with the build's other pools: scheduling.py)
        self.torch_version = ""  # what the worker imported (known once ready)
        self._ready = False
        self.used = False  # asked to run anything yet (an unused pool may be killed, not waited for)
        self.running = Running()  # the jobs at work now, as the zygote tells (the progress line's)
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the pool
        # -P: not the working folder first on the import path; -s: no user site-packages.
        imports, keep = None, list[str]()
        if python is not None and python != Path(sys.executable):  # another torch's environment
            from quizgen.torch_versions import environments

            imports = str(environments.import_path())
            keep.append(str(Path(quizgen.__file__).resolve().parent))  # where the import path's link leads
        cmd = [str(python or sys.executable), "-P", "-s", "-m", "quizgen.execution.worker.zygote"]
        cmd += ["--jobs", str(jobs), "--memory", str(memory)]
        if not warm:
            cmd.append("--cold")
        env = environment(imports)
        self.sandboxed = sandbox != "off"
        if self.sandboxed:
            try:
                launch = sandbox_engine.launch([*cmd, "--confine"], env, keep, str(python or sys.executable))
            except sandbox_engine.SandboxError as exc:
                self.stderr.close()
                raise SandboxUnavailable(f"the sandbox cannot start: {exc}") from exc
        else:
            launch = sandbox_engine.Launch(cmd)
        try:
            self.proc = subprocess.Popen(
                launch.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                env=env if not self.sandboxed else {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
                cwd="/",  # the project's files must not be found by a relative import or path
                pass_fds=launch.fds,
                # A session of its own, without a terminal, sandbox or not: no snippet can push input
                # into the user's shell (TIOCSTI) or write escapes to the terminal through /dev/tty.
                start_new_session=True,
            )
        finally:
            launch.close()

    def stderr_tail(self, lines: int = 15) -> str:
        """The last lines the pool and its workers wrote to stderr (kept for reports of quizgen bugs)."""
        self.stderr.seek(0)
        return "\n".join(self.stderr.read().decode(errors="replace").strip().splitlines()[-lines:])

    def _died(self) -> WorkerCrashed:
        self.proc.wait()
        detail = self.stderr_tail() or f"exit status {self.proc.returncode}"
        return WorkerCrashed(f"the quizgen worker process died:\n{detail}")

    def ready(self) -> None:
        """Wait for the pool to be up (torch imported, sandbox entered or not)."""
        if self._ready:
            return
        try:
            message = self._receive()
        except WorkerCrashed as exc:
            if not self.sandboxed:
                raise
            raise SandboxUnavailable(
                f"bubblewrap could not start the sandbox: {self.stderr_tail() or exc.message}\n"
                "(--sandbox=off runs this repository's snippets with your own rights: "
                "only for cards you trust)"
            ) from exc
        self.torch_version = str(message.get("torch_version", ""))
        self._ready = True

    def _send(self, message: Request) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())

    def _send_now(self, message: Request) -> None:
        self._send(message)
        assert self.proc.stdin is not None
        self.proc.stdin.flush()

    def _receive(self) -> Reply:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline(REPLY_LIMIT)
        if not line:
            raise self._died()
        if not line.endswith(b"\n"):  # the pool relays results its workers bounded: this is quizgen's bug
            self.proc.kill()
            raise WorkerCrashed(f"the quizgen worker process sent a reply larger than {REPLY_LIMIT:,} bytes")
        message: Reply = json.loads(line)
        return message

    def run(
        self,
        work: dict[str, Job],
        timeout: float = DEFAULT_TIMEOUT,
        timeouts: Mapping[str, float] | None = None,
    ) -> Generator[tuple[str, Result], None, None]:
        """Yield (key, result) for every job as results come in; stopping early cancels the rest.
        A big order search is split across the workers (order.split): its key's result is the joined one."""
        self.used = True
        self.ready()
        split = order_split.Split(longest_first(work), self.jobs)
        first = self._warm_for(split.first)  # (a split search's parts share their first uses)
        # A card's own timeout, else everyone's (a split search's parts, "key#partN", its key's).
        feed = Feed(
            self.slots, self._send_now, lambda key: (timeouts or {}).get(key.partition("#")[0], timeout)
        )
        feed.put(first)
        left = set(first)
        kept = 0  # JSON values in the records received, as their workers counted them
        try:
            while left:
                message = self._receive()
                if "result" not in message:
                    self.running.heard(message)
                    continue
                if "id" in message and message["id"] in left:
                    feed.answered()
                    self.running.done(message["id"])
                    kept += message["result"].pop("nodes", 0)
                    if kept > records.BUILD_NODE_LIMIT:
                        raise ResultsTooLarge(
                            f"the snippets' results hold more than {records.BUILD_NODE_LIMIT:,} values in "
                            "all (a card's snippet may be sending made-up answers): nothing was written"
                        )
                    left.discard(message["id"])
                    results, more = split.receive(message["id"], message["result"])
                    left |= set(more)
                    feed.put(more)
                    yield from results
        finally:
            self.running.clear()
            feed.stop()
            if left and self.proc.poll() is None:
                self._cancel()
            feed.release()  # (stopped, cancelled or gone: none of its jobs runs now)

    def _warm_for(self, work: dict[str, Job]) -> dict[str, Job]:
        """Tell the zygote torch's first uses the jobs share (warming.py), before the jobs: it forks
        their workers warm. The jobs, in the order to hand them out."""
        apart = warming.apart(work, self.jobs)
        if features := warming.shared(work):
            self._send({"warm": features, "apart": apart})
        return warming.behind_longest(work, list(apart), self.jobs)

    def _cancel(self) -> None:
        # The pool stops its jobs at once; should it not say so in time (quizgen's bug, or a machine
        # far too busy), it is killed: a stopped build never waits on it for good.
        watchdog = threading.Timer(CANCEL_SECONDS, self.proc.kill)
        watchdog.start()
        try:
            self._send({"cancel": True})
            assert self.proc.stdin is not None
            self.proc.stdin.flush()
            while not self._receive().get("cancelled"):
                pass
        except (OSError, WorkerCrashed):
            pass
        finally:
            watchdog.cancel()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()

    def kill(self) -> None:
        """End the pool at once, whatever it runs: a run reading from it then finds it gone."""
        self.proc.kill()

    def stop(self) -> None:
        """Close the pool; one never asked for anything is killed first (started early and not needed:
        no wait for torch to finish importing)."""
        if not self.used:
            self.kill()
        self.close()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def execute(
    work: dict[str, Job],
    *,
    jobs: int,
    timeout: float = DEFAULT_TIMEOUT,
    memory: int = DEFAULT_MEMORY,
    on_result: Callable[[str, Outcome], bool] | None = None,
    pool: Pool | None = None,
    sandbox: str = "auto",
    timeouts: Mapping[str, float] | None = None,
    python: Path | None = None,
    watch: Callable[[Running], None] | None = None,
) -> dict[str, Outcome]:
    """Run every job; `on_result` is told of each outcome and returns False to stop early; `watch` is
    given the jobs at work (the progress line's).

    Without a `pool`, one is started for this call (only when there is work) and closed after, under
    `python` (another torch's environment) when given.
    """
    outcomes: dict[str, Outcome] = {}
    if not work:
        return outcomes
    own = pool is None
    # Warming optimizers up once in the zygote pays when a worker runs more than one job; with a
    # job per worker, each worker warms only what its snippet uses, in parallel.
    workers = max(1, min(jobs, len(work)))
    active = pool or Pool(workers, memory, warm=len(work) > workers, sandbox=sandbox, python=python)
    try:
        active.ready()
        if watch is not None:
            watch(active.running)
        # (closed whatever happens: a run left open holds its `-j` slots, and another pool's run, the
        # matrix's beside this one, would wait for them for ever)
        with contextlib.closing(active.run(work, timeout, timeouts)) as results:
            for key, result in results:
                outcome = Outcome.from_result(result)
                outcomes[key] = outcome
                if on_result is not None and not on_result(key, outcome):
                    break
    finally:
        if own:
            active.close()
    return outcomes

"""Which jobs run when: the costliest first, and at most `-j` at once across the pools of a build.

A build's installed torch and each torch of its matrix have a pool of their own, each as many workers
as `-j` (pipeline, torch_versions/versioned.py), and their jobs run side by side. Each pool is handed
jobs only as a shared slot frees, so the jobs running at once, over all pools, are never more than `-j`.
Without that, two pools ran four jobs on two cores (processes switched every few milliseconds share
each core's caches, and a search that times its own work by the clock judges its choices on interrupted
samples): one search's job took 1.3-3x its CPU in some builds; over four paired cold builds of the
shipped deck, its order searches' CPU went 21.5 -> 19.1 s (medians; bench/README.md, fifteenth round).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Mapping

from quizgen.execution.protocol import Job, Request


class Slots:
    """At most `count` jobs running at once among the pools that share this."""

    def __init__(self, count: int) -> None:
        self.count = max(1, count)
        self._free = self.count
        self._changed = threading.Condition()

    def take(self, stop: threading.Event) -> bool:
        """Wait for a free slot and take it; False (nothing taken) once `stop` is set and `wake` called."""
        with self._changed:
            while not self._free and not stop.is_set():
                self._changed.wait()
            if stop.is_set():
                return False
            self._free -= 1
            return True

    def give(self, count: int = 1) -> None:
        """Free `count` slots taken before (their jobs answered, or were cancelled)."""
        with self._changed:
            self._free = min(self.count, self._free + count)
            self._changed.notify_all()

    def wake(self) -> None:
        """Wake every pool waiting for a slot, to look at its `stop` again."""
        with self._changed:
            self._changed.notify_all()


class Feed:
    """A pool's writer thread: it hands its zygote each job put here as a slot frees (a job holds its slot
    until `answered`), in the order put, with the seconds `limit` gives its key."""

    def __init__(self, slots: Slots, send: Callable[[Request], None], limit: Callable[[str], float]) -> None:
        self.slots, self._send, self._limit = slots, send, limit
        self._outbox: queue.SimpleQueue[tuple[str, Job] | None] = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._sent = self._answered = 0  # (each counted by one thread alone: this one's, the reader's)
        # (a thread: the zygote answers while jobs are still being sent, and both pipes are finite)
        self._thread = threading.Thread(target=self._feed, name="quizgen-feed", daemon=True)
        self._thread.start()

    def put(self, jobs: Mapping[str, Job]) -> None:
        for item in jobs.items():
            self._outbox.put(item)

    def _feed(self) -> None:
        try:
            while (item := self._outbox.get()) is not None and self.slots.take(self._stopping):
                self._sent += 1
                self._send({"id": item[0], "job": item[1], "timeout": self._limit(item[0])})
        except (BrokenPipeError, OSError):
            pass  # the zygote died; the pool's reader reports it

    def answered(self) -> None:
        """A job handed out has its result: its slot is free."""
        self._answered += 1
        self.slots.give()

    def stop(self) -> None:
        """Hand out nothing more (the thread ends, waiting for a slot or not)."""
        self._stopping.set()
        self.slots.wake()
        self._outbox.put(None)
        self._thread.join()

    def release(self) -> None:
        """Free the slots of the jobs handed out and not answered, once none of them runs (after `stop`)."""
        self.slots.give(self._sent - self._answered)


def longest_first(work: dict[str, Job]) -> dict[str, Job]:
    """The jobs in the order they are handed out: order searches first, the costliest first (about), so
    the workers end together (a long search handed out last kept one core idle to its end)."""
    return dict(sorted(work.items(), key=lambda item: -_weight(item[1])))


def _weight(job: Job) -> int:
    """How long a job runs, roughly, for its place in the queue only: an order search's blocks times its
    passes, four times that with indentation (every block at every level); 0 for the rest."""
    if job["type"] != "search":
        return 0
    blocks = len(job["lines"]) + len(job["distractors"])
    return blocks * job["repeat"] * (4 if job.get("indent") else 1)

"""The parent side of execution: turns cards into jobs and runs them in the worker pool.

This module never imports torch; `quizgen.worker` runs in its own process and does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Generator
from pathlib import Path
from typing import IO, Any

import quizgen
from quizgen.errors import QuizgenError
from quizgen.model import BasicCard, Card, Deck, MythCard, OrderCard, Outcome, ValueCard

DEFAULT_TIMEOUT = 30.0
DEFAULT_MEMORY = 2 << 30


def job_for(deck: Deck, card: Card) -> dict[str, Any] | None:
    """What the worker must run for a card, or None when nothing in it executes."""
    setup = [deck.setup.to_job()] if deck.setup else []
    if isinstance(card, ValueCard) and card.code:
        return {
            "type": "run",
            "answer": True,
            "setup": setup,
            "code": card.code.to_job(),
            "expr": card.answer_expr.to_job() if card.answer_expr else None,
        }
    if isinstance(card, MythCard) and card.proof:
        return {"type": "run", "setup": setup, "code": card.proof.to_job()}
    if isinstance(card, OrderCard) and card.check:
        return {
            "type": "order",
            "setup": setup + ([card.setup.to_job()] if card.setup else []),
            "lines": [s.to_job() for s in card.lines],
            "distractors": [s.to_job() for s in card.distractors],
            "repeat": card.repeat,
            "check": card.check.to_job(),
        }
    if isinstance(card, BasicCard) and card.code:
        return {"type": "run", "setup": setup, "code": card.code.to_job()}
    return None


class WorkerCrashed(QuizgenError):
    """The worker process itself died (not a snippet): an environment problem, such as no torch."""


class Pool:
    """A `python -m quizgen.worker` process that imports torch once and forks warm workers from it.

    A pool can serve several runs one after another (watch mode, the test suite), so torch is
    imported once for all of them.
    """

    def __init__(self, jobs: int, memory: int = DEFAULT_MEMORY, warm: bool = True) -> None:
        self.jobs, self.memory = jobs, memory
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the pool
        env = dict(os.environ)
        # Thread pools are sized when torch loads; one thread keeps answers bit-reproducible
        # and keeps the zygote safe to fork.
        env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
        src = str(Path(quizgen.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
        cmd = [sys.executable, "-m", "quizgen.worker", "--jobs", str(jobs), "--memory", str(memory)]
        if not warm:
            cmd.append("--cold")
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=env
        )

    def _died(self) -> WorkerCrashed:
        self.proc.wait()
        self.stderr.seek(0)
        tail = self.stderr.read().decode(errors="replace").strip().splitlines()[-15:]
        detail = "\n".join(tail) or f"exit status {self.proc.returncode}"
        return WorkerCrashed(f"the quizgen worker process died:\n{detail}")

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())

    def _receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise self._died()
        message: dict[str, Any] = json.loads(line)
        return message

    def run(
        self, work: dict[str, dict[str, Any]], timeout: float = DEFAULT_TIMEOUT
    ) -> Generator[tuple[str, dict[str, Any]], None, None]:
        """Yield (key, result) for every job as results come in; stopping early cancels the rest."""
        assert self.proc.stdin is not None
        stdin = self.proc.stdin

        def feed() -> None:
            try:
                for key, job in work.items():
                    self._send({"id": key, "job": job, "timeout": timeout})
                stdin.flush()
            except (BrokenPipeError, OSError):
                pass  # the worker died; the reader reports it

        # A writer thread: the worker answers while jobs are still being sent, and both pipes are finite.
        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        left = set(work)
        try:
            while left:
                message = self._receive()
                if "id" in message and message["id"] in left:
                    left.discard(message["id"])
                    yield message["id"], message["result"]
        finally:
            writer.join()
            if left and self.proc.poll() is None:
                self._cancel()

    def _cancel(self) -> None:
        try:
            self._send({"cancel": True})
            assert self.proc.stdin is not None
            self.proc.stdin.flush()
            while not self._receive().get("cancelled"):
                pass
        except (OSError, WorkerCrashed):
            pass

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

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def execute(
    work: dict[str, dict[str, Any]],
    *,
    jobs: int,
    timeout: float = DEFAULT_TIMEOUT,
    memory: int = DEFAULT_MEMORY,
    on_result: Callable[[str, Outcome], bool] | None = None,
    pool: Pool | None = None,
) -> dict[str, Outcome]:
    """Run every job; `on_result` is told of each outcome and returns False to stop early.

    Without a `pool`, one is started for this call (only when there is work) and closed after.
    """
    outcomes: dict[str, Outcome] = {}
    if not work:
        return outcomes
    own = pool is None
    # Warming optimizers up once in the zygote pays when a worker runs more than one job; with a
    # job per worker, each worker warms only what its snippet uses, in parallel.
    workers = max(1, min(jobs, len(work)))
    active = pool or Pool(workers, memory, warm=len(work) > workers)
    try:
        results = active.run(work, timeout)
        for key, result in results:
            outcome = Outcome.from_json(result)
            outcomes[key] = outcome
            if on_result is not None and not on_result(key, outcome):
                results.close()
                break
    finally:
        if own:
            active.close()
    return outcomes

"""A progress line that records what a run tells it (terminal.ProgressLine's interface), for tests of
what the build shows on a terminal without one."""

from __future__ import annotations

from collections.abc import Callable


class RecordedLine:
    def __init__(self) -> None:
        self.counts: list[tuple[int, int]] = []
        self.watched: list[tuple[object, Callable[[str], str]]] = []  # (running jobs, how a key is named)
        self.stopped = 0

    def __call__(self, done: int, total: int) -> None:
        self.counts.append((done, total))

    def watch(self, running: object, describe: Callable[[str], str]) -> None:
        self.watched.append((running, describe))

    def stop(self) -> None:
        self.stopped += 1

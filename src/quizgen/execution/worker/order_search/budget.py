"""What one order search may spend: accepted orders and memory, each with a verdict on the puzzle.

A search past its budget stops at once with a message that says what is wrong with the puzzle (too
loose a check, lines that hardly depend on each other, a state too big to hold many of), located at
the card's check as any failed search is: never a worker that ran out of memory. No verdict depends on
how fast or busy the machine is: the space a search may cover is bounded by counting it first
(MAX_CANDIDATES, order.levels.counted), and time is the job's own limit (its timeout, ORDER_TIMEOUT_FACTOR
times a snippet's), reported as any snippet's timeout. Only a plain search that could not end within
that limit is refused before it starts (`plain`), far from where a shipped or tested puzzle is.
"""

from __future__ import annotations

import contextlib
import gc
import resource
from collections.abc import Iterator

from quizgen.execution.worker.snippets import SnippetFailed

MAX_ACCEPTED = 5040  # 7!: more accepted orders and the lines hardly constrain each other
PLAIN_SECONDS = 240.0  # CPU seconds past which a plain search is refused unrun (a search's own limit: 300 s)
MEMORY_SHARE = 0.5  # of what the worker may still grow by when the search starts
MEMORY_DEFAULT = 1 << 30  # bytes the search may grow by when the worker has no memory cap
_EVERY = 64  # checks of memory between reads of /proc


class OverBudget(SnippetFailed):
    """The search would pass its budget: the message says why the puzzle is at fault."""


def _vsize() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):  # pragma: no cover - not Linux
        return 0


class Budget:
    """The limits of one search, measured from its start."""

    def __init__(self, candidates: int) -> None:
        self.candidates = candidates
        start = _vsize()
        cap = resource.getrlimit(resource.RLIMIT_AS)[0]
        room = cap - start if cap != resource.RLIM_INFINITY and cap > start else 2 * MEMORY_DEFAULT
        self.memory = start + int(room * MEMORY_SHARE) if start else 0
        self._ticks = 0

    def accepted(self, count: int) -> None:
        """Stop once more orders pass than a puzzle can mean."""
        if count > MAX_ACCEPTED:
            raise OverBudget(
                f"more than {MAX_ACCEPTED:,} of the {self.candidates:,} candidate orders pass the check: "
                "the lines hardly constrain each other; add a check that only the intended orders pass "
                "(assert what the right order achieves), or lines that depend on each other"
            )

    def tick(self, held: int = 0) -> None:
        """Between two steps: stop when the search, holding `held` states, has used its memory."""
        self._ticks += 1
        if self._ticks % _EVERY:
            return
        if not self.memory or _vsize() <= self.memory:
            return
        gc.collect()  # (what a full collection frees first: young_collections_only)
        if _vsize() > self.memory:
            raise OverBudget(
                f"the search for the accepted orders needs more memory than a worker has "
                f"({self.candidates:,} candidate orders, {held:,} states held at once): make the lines "
                "depend on each other, or the tensors they change smaller"
            )

    def plain(self, one: float, candidates: int | None = None) -> None:
        """Before the plain search (every candidate from the start): stop if it could not end within a
        search's time limit, `one` being the CPU seconds a single candidate took (`candidates`: the
        search's own count, when it is not the puzzle's)."""
        count = self.candidates if candidates is None else candidates
        if one * count > PLAIN_SECONDS:
            raise OverBudget(
                f"the search would take about {one * count:.0f} s of CPU: {count:,} "
                "candidate orders, each run from the start (its state cannot be copied); make the lines "
                "depend on each other, or the setup cheaper"
            )


@contextlib.contextmanager
def young_collections_only() -> Iterator[None]:
    """No full garbage collection while a search runs unless its memory runs out (`tick`): each walks
    every object the search holds (its threads, groups and states: ~200,000 for the shipped loop, six
    times, 7% of its CPU; and before the tree, what counting its candidates made: ~2.5% more), while what
    the search drops is mostly young (collected with the youngest generations) and the job's process
    ends with its search. The loop's peak memory: 344 -> 348 MB."""
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], 1 << 30)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)

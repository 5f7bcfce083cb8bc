"""What the fast order search's own work costs, measured as it goes: to choose between copying a state
and rebuilding it from setup, and whether comparing states is worth it (order.tree)."""

from __future__ import annotations

import time
from collections.abc import Sequence

# The search's own work is timed by the wall clock (perf_counter: ~0.3 us a read). A CPU clock would not
# count the moments another process had the core, but reading one is a system call that costs 20-300 us
# on these machines once a step has run: the shipped loop's search read the thread's CPU clock 2,024
# times (already one run in EVERY, `timing`), 0.54-0.67 s of its 3.2-3.5 s. A moment another process
# had the core makes one sample dear, and a sample counts at most OUTLIER times the mean (`_mean`); a
# machine busy throughout slows every kind of work alike, and the choices weigh one against another.
clock = time.perf_counter

SAMPLES = 8  # fingerprints taken before comparing may be judged not worth it
OUTLIER = 4.0  # the most a single sample counts for, in means so far
TIMED, EVERY = 16, 8


class Costs:
    """Running means of what a step, a fingerprint, a copy and a run of setup take (seconds), and how
    often comparing has merged nodes."""

    def __init__(self) -> None:
        self.step = self.compare = self.copy = self.rebuild = 0.0
        self.compared = self.merges = 0  # nodes compared, and merged into another
        self._runs: dict[str, int] = {}  # runs of each kind of work so far (`timing`)

    def timing(self, kind: str) -> float | None:
        """The clock now if this run of `kind` of work ("step", "copy", "compare") is to be
        timed, else None (its cost then `since` None, which the means skip)."""
        runs = self._runs[kind] = self._runs.get(kind, 0) + 1
        return clock() if runs <= TIMED or runs % EVERY == 0 else None

    @staticmethod
    def since(began: float | None) -> float | None:
        return None if began is None else clock() - began

    @staticmethod
    def _mean(old: float, new: float, weight: int) -> float:
        # A sample counts at most OUTLIER times the mean: one copy that ran into a collection of the
        # garbage collector (14 ms against a median of 41 us) made copies look dear for the rest of a
        # search, and a copy judged dear is not run, so never measured again: the search rebuilt every
        # state from setup and cost 1.5 times the plain one. A cost that truly grows still wins.
        return new if not old else old + (min(new, OUTLIER * old) - old) / weight

    def stepped(self, seconds: float | None) -> None:
        if seconds is not None:
            self.step = self._mean(self.step, seconds, 16)

    def fingerprinted(self, seconds: float | None, merged: bool) -> None:
        if seconds is not None:
            self.compare = self._mean(self.compare, seconds, 16)
        self.compared += 1
        self.merges += merged

    def copied(self, seconds: float | None) -> None:
        if seconds is not None:
            self.copy = self._mean(self.copy, seconds, 16)

    def rebuilt(self, seconds: float) -> None:
        self.rebuild = self._mean(self.rebuild, seconds, 4)

    def rebuild_is_cheaper(self, steps: int) -> bool:
        """Whether running setup again and `steps` steps costs less than a copy (a small search, a
        state that takes long to walk)."""
        return bool(self.copy and self.rebuild) and self.rebuild + steps * self.step < self.copy

    def worth_comparing(self, work: Sequence[int]) -> bool:
        """Whether comparing nodes with `work` steps still to run each could save more than it costs: at
        best all but the busiest one's steps are saved (near the end of a small search, running them
        costs less than comparing), as likely as merges have been so far."""
        if self.compared < SAMPLES:
            return True
        likely = (self.merges + 1) / (self.compared + 2)
        return likely * (sum(work) - max(work)) * self.step > len(work) * self.compare

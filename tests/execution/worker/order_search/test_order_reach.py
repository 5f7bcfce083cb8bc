"""How far a failed step got (order.reach): the tracer that records it."""

from __future__ import annotations

import sys

from quizgen.execution.worker.order_search.reach import Tracer, reached

LOOP = "for k in range(3):\n    a = k\n    seen.append(gettrace())\n"


def _traced(source: str, lines: int) -> tuple[Tracer, list[object], bool]:
    """The tracer after running the source under it, what `gettrace()` gave in it, and whether the
    tracer's record is whole (asked as Runs.step asks: before the trace is cleared)."""
    code = compile(source, "step", "exec")
    tracer = Tracer(code, lines)
    seen: list[object] = []
    sys.settrace(tracer)
    try:
        exec(code, {"seen": seen, "gettrace": sys.gettrace})
        whole = tracer.installed()
    finally:
        sys.settrace(None)
    return tracer, seen, whole


def test_the_tracer_takes_itself_out_once_every_line_ran() -> None:
    """Tracing slows every Python frame torch runs, and once each of the step's lines ran the trace can
    tell nothing more: the loop's later passes (most of a whole training loop) run untraced. Before, the
    tracer stayed installed to the end of the step."""
    tracer, seen, whole = _traced(LOOP, 3)
    assert seen == [None, None, None]  # (out before the third line of the first pass ran)
    assert whole and reached(tracer.lines, [1, 2, 3]) == (3, frozenset({0, 1, 2}))


def test_the_tracer_stays_while_a_line_has_not_run() -> None:
    """A line that never runs (an `if` whose test is false) leaves the trace on to the end: what ran
    is all known, and a sibling that differs there can be ruled out."""
    source = "for k in range(3):\n    seen.append(gettrace())\n    if k > 5:\n        a = 1\n"
    tracer, seen, whole = _traced(source, 4)
    assert all(s is not None for s in seen) and whole
    assert reached(tracer.lines, [1, 2, 3, 4]) == (3, frozenset({0, 1, 2}))

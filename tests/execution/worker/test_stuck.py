"""Where a timed-out snippet was (execution/worker/stuck.py), read from the stack its process dumped."""

from __future__ import annotations

import time

from quizgen.execution.worker import stuck


def test_the_dump_is_read_in_linear_time() -> None:
    # The job's process writes the dump into its own folder, so a snippet can fill it with blank lines.
    started = time.process_time()
    assert stuck._FRAME.search("\n" * (1 << 16)) is None
    assert time.process_time() - started < 1  # ~1 ms; `^\s*` over the lines took ~3 s
    found = stuck._FRAME.search('Traceback:\n  File "cards/a.yaml", line 9, in <module>\n')
    assert found is not None and (found[1], found[2]) == ("cards/a.yaml", "9")

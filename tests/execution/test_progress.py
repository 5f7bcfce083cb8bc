"""Issue 29: the build says what it is doing. A job tells how far it is on a pipe of its own (progress.py),
its worker and the zygote relay it, and the progress line names the card waited on, with how far an
order search is; a card that writes made-up records there only ever shows numbers, for itself."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.errors import CardErrors
from quizgen.execution import progress
from quizgen.execution.pool import Pool, Running, execute
from quizgen.execution.protocol import Reply
from quizgen.terminal import ProgressLine
from tests.support.order_puzzles import job
from tests.support.progress_line import RecordedLine
from tests.support.projects import write_project

RECORD = progress.RECORD


def test_the_last_whole_record_is_read_clamped() -> None:
    assert progress.last_record(b"") is None
    assert progress.last_record(RECORD.pack(0, 3, 9)[:-1]) is None  # (a part of one)
    data = RECORD.pack(0, 3, 9) + RECORD.pack(1, 7, 9) + b"\x01\x02"
    assert progress.last_record(data) == (1, 7, 9)
    made_up = RECORD.pack(2**64 - 1, 2**64 - 1, 2**63)
    assert progress.last_record(made_up) == (len(progress.PHASES), progress.LIMIT, progress.LIMIT)


def _heard(running: Running, *messages: Reply) -> None:
    for message in messages:
        running.heard(message)


def test_the_progress_line_names_the_card_waited_on(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    line = ProgressLine(stream)
    running = Running()
    _heard(running, {"id": "k1", "started": True}, {"id": "k2", "started": True})
    _heard(running, {"id": "k1", "progress": [1, 1200, 4254]}, {"id": "nobody", "progress": [0, 1, 2]})
    monkeypatch.setattr(time, "monotonic", lambda: 1e9)  # every job started long ago
    monkeypatch.setenv("COLUMNS", "200")  # (a narrower terminal gets the line cut, with an ellipsis)
    line.watch(running, lambda key: f"card-{key} (cards/d.yaml:3)")
    line.start -= 5
    line(3, 5)
    shown = stream.getvalue().split("\r")[-1]
    assert shown.startswith("executing snippets: 3/5, waiting on card-k1 (cards/d.yaml:3) (")
    assert shown.rstrip().endswith(" s; searching the distractors: 1,200 of 4,254 candidates decided)")
    running.done("k1")
    line(4, 5)
    shown = stream.getvalue().split("\r")[-1]
    assert shown.startswith("executing snippets: 4/5, waiting on card-k2 (cards/d.yaml:3) (")
    assert shown.rstrip().endswith(" s)")  # (it told nothing of its progress)
    running.done("k2")
    line(5, 5)
    assert stream.getvalue().endswith("\n") and "waiting" not in stream.getvalue().split("\r")[-1]


def test_a_search_tells_its_progress_through_the_pool(pool: Pool) -> None:
    """The zygote says when a job starts; an order search reports (the first report comes at once)."""
    told: list[Running] = []
    heard: list[Reply] = []
    original = Running.heard

    def recording(self: Running, message: Reply) -> None:
        heard.append(message)
        original(self, message)

    puzzle = job("log = []\n", [f"log.append({k})" for k in range(4)], "assert log[:2] == [0, 1]\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Running, "heard", recording)
        outcomes = execute({"search": puzzle}, jobs=1, pool=pool, watch=told.append)
    assert outcomes["search"].ok and told == [pool.running]
    assert {"id": "search", "started": True} in heard
    reports = [m["progress"] for m in heard if "progress" in m]
    assert reports and all(phase in (0, 1) and 0 <= done <= total for phase, done, total in reports)
    assert pool.running.longest() is None  # (nothing left at work)


FLOOD = """
import stat
record = bytes([0xFF]) * 24
for fd in range(3, 64):
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.set_blocking(fd, False)
            for _ in range(20_000):
                os.write(fd, record[: 1 + _ % 24])
    except OSError:
        pass
"""


def test_a_card_flooding_its_pipes_with_made_up_progress_fails_only_itself(
    options: Callable[..., pipeline.Options], tmp_path: Path
) -> None:
    body = "\n".join("      " + line for line in FLOOD.strip("\n").splitlines())
    deck = (
        "deck: Hostile\nsetup: |\n  import os, torch\ncards:\n"
        f"  - id: flooder\n    kind: value\n    ask: q\n    code: |\n{body}\n    answer_expr: 1\n"
        "  - id: honest\n    kind: value\n    ask: q\n    code: |\n      x = 2\n    answer_expr: x\n"
    )
    root = write_project(tmp_path / "p", {"d.yaml": deck})
    heard: list[Reply] = []
    with pytest.MonkeyPatch.context() as patch:
        original = Running.heard
        patch.setattr(Running, "heard", lambda self, m: (heard.append(m), original(self, m))[1])
        with pytest.raises(CardErrors) as info:
            pipeline.check(options(root, use_cache=False, jobs=1))
    [problem] = [str(p) for p in info.value.problems]
    assert "card 'flooder' -> code: the snippet wrote into its job's result pipe" in problem
    for message in heard:
        if "progress" in message:
            phase, done, total = message["progress"]
            assert phase <= len(progress.PHASES) and done <= progress.LIMIT and total <= progress.LIMIT


def test_a_run_stopped_early_leaves_its_line_and_draws_no_more() -> None:
    """--fail-fast ends a run before every snippet ran: the line ends, and is not redrawn under the
    errors printed after it."""
    stream = io.StringIO()
    line = ProgressLine(stream)
    line.watch(Running(), str)
    line.start -= 5
    line(2, 9)
    line.stop()
    assert stream.getvalue() == "\rexecuting snippets: 2/9\n"
    with line._lock:
        assert line._running is None  # what the ticker checks before drawing
    line.stop()
    assert stream.getvalue() == "\rexecuting snippets: 2/9\n"  # nothing more


def test_a_build_lets_the_line_name_the_card_it_waits_on(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    from quizgen.execution.cache import for_output

    deck = """\
deck: Named
cards:
  - id: one
    kind: value
    ask: "What is 1 + 1?"
    code: |
      two = 1 + 1
    answer_expr: two
    answer: 2
"""
    root = write_project(tmp_path, {"deck.yaml": deck})
    line = RecordedLine()
    pipeline.check(options(root, progress=line))
    [(running, describe)] = line.watched
    cache = for_output(root / "build")
    [key] = cache.keys("results")
    cache.close()
    assert describe(key) == f"one ({root}/cards/deck.yaml:3)"
    assert running is not None and line.counts[-1] == (1, 1) and line.stopped == 1

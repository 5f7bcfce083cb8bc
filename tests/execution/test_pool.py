"""The parent side of the pool: the order jobs are handed out in, and how many run at once."""

from __future__ import annotations

import itertools
import threading

import pytest

from quizgen.execution.pool import Pool, execute
from quizgen.execution.protocol import Job, Result
from quizgen.execution.scheduling import Slots, longest_first


def _snippet(code: str, line: int) -> dict[str, object]:
    return {"code": code, "path": "cards/t.yaml", "line": line}


def _run(code: str) -> Job:
    return {"type": "run", "setup": [], "code": _snippet(code, 1)}  # type: ignore[typeddict-item]


def _search(lines: list[str], repeat: int = 1, indent: int = 0) -> Job:
    job = {
        "type": "search",
        "setup": [],
        "lines": [_snippet(code, k + 1) for k, code in enumerate(lines)],
        "distractors": [],
        "repeat": repeat,
        "check": _snippet("assert x == 3", 10),
    }
    if indent:
        job.update(indent=indent, levels=[0] * len(lines))
    return job  # type: ignore[return-value]


def test_order_searches_are_handed_out_first_the_costliest_first() -> None:
    work = {
        "run": _run("x = 1\n"),
        "small": _search(["x = 1\n", "x += 2\n"]),
        "twice": _search(["x = 1\n", "x += 1\n", "x += 1\n"], repeat=2),
        "indented": _search(["x = 1\n", "x += 2\n"], indent=4),
        "run2": _run("y = 2\n"),
    }
    assert list(longest_first(work)) == ["indented", "twice", "small", "run", "run2"]


def test_a_search_queued_last_runs_first() -> None:
    # One worker answers in the order it was handed the jobs: the search, queued after the runs, first.
    work = {f"run{k}": _run(f"x = {k}\n") for k in range(3)}
    work["search"] = _search(["x = 1\n", "x += 2\n"])
    with Pool(1, warm=False) as single:
        done = [key for key, _ in single.run(work)]
    assert done == ["search", "run0", "run1", "run2"]


def _interval(result: Result) -> tuple[float, float]:
    start, end = result["output"].split()
    return float(start), float(end)


def test_pools_that_share_slots_run_no_more_jobs_at_once_than_they_have_slots() -> None:
    # A build's pools (its installed torch's, its matrix's) share `-j` slots: here one, so no two of the
    # jobs, two pools of two workers each, are ever at work at the same moment (the system's clock).
    timed = "import time\nprint(time.monotonic())\ntime.sleep(0.3)\nprint(time.monotonic())\n"
    shared = Slots(1)
    intervals: list[tuple[float, float]] = []

    def run(pool: Pool, tag: str) -> None:
        work = {f"{tag}{k}": _run(timed) for k in range(3)}
        intervals.extend(_interval(result) for _, result in pool.run(work))

    with Pool(2, warm=False, slots=shared) as first, Pool(2, warm=False, slots=shared) as second:
        first.ready()
        second.ready()
        other = threading.Thread(target=run, args=(second, "b"))
        other.start()
        run(first, "a")
        other.join()
    assert len(intervals) == 6
    ordered = sorted(intervals)
    assert all(end <= next_start for (_, end), (next_start, _) in itertools.pairwise(ordered))


def test_a_run_whose_reader_fails_gives_back_its_slots() -> None:
    # The matrix's run reads its results in a thread of its own, beside the installed torch's. When its
    # reader fails (our bug, kept to be raised where the build waits), its run must still end and give
    # back its slots: the other pool's jobs then run, rather than the build waiting for ever.
    shared = Slots(1)
    slow = _run("import time\ntime.sleep(0.3)\nprint('slow')\n")

    def fails(key: str, outcome: object) -> bool:
        raise RuntimeError("a reader's bug")

    with Pool(2, warm=False, slots=shared) as first, Pool(1, warm=False, slots=shared) as second:
        first.ready()
        second.ready()
        with pytest.raises(RuntimeError, match="a reader's bug") as kept:  # (kept, as the matrix keeps it)
            execute({"a0": slow, "a1": slow, "a2": slow}, jobs=2, pool=first, on_result=fails)
        done: dict[str, object] = {}
        other = threading.Thread(
            target=lambda: done.update(execute({"b": _run("print('b')")}, jobs=1, pool=second))
        )
        other.start()
        other.join(120)  # (a generous bound: without the fix it never ends)
        assert not other.is_alive(), "the second pool's job waited for a slot the failed run kept"
    assert list(done) == ["b"]
    assert kept.value.__traceback__ is not None

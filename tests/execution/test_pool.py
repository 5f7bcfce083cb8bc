"""The parent side of the pool: the order jobs are handed out in."""

from __future__ import annotations

from quizgen.execution.pool import Pool, longest_first
from quizgen.execution.protocol import Job


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

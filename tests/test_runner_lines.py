"""The worker's copy of card lines for tracebacks (runner._register_lines): one list per file, each job
writing only its own lines, so a big file costs each job its own lines rather than its place."""

from __future__ import annotations

import linecache
from typing import Any

from quizgen.execution import runner


def _job(path: str, line: int, code: str, setup: list[dict[str, Any]] | None = None) -> Any:
    return {"type": "run", "setup": setup or [], "code": {"code": code, "path": path, "line": line}}


def test_each_job_shows_its_own_lines_wherever_it_stands(tmp_path: Any) -> None:
    path = str(tmp_path / "deck.yaml")
    setup = [{"code": "import math\n", "path": path, "line": 3}]
    runner._register_lines(_job(path, 40, "x = 1\ny = 2\n", setup))
    runner._register_lines(_job(path, 10, "z = 3\n", setup))
    assert [linecache.getline(path, n) for n in (3, 10, 40, 41)] == [
        "import math\n",
        "z = 3\n",
        "x = 1\n",
        "y = 2\n",
    ]
    runner._register_lines(_job(path, 10, "z = 4\nw = 5\n", setup))  # the file was edited
    assert [linecache.getline(path, n) for n in (10, 11)] == ["z = 4\n", "w = 5\n"]
    assert linecache.getline(path, 5) == "\n"  # a line no job showed
    assert len(runner._lines[path]) == 41

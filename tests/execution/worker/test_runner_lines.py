"""The worker's copy of card lines for tracebacks (runner._register_lines): one list per file, each job
writing only its own lines, so a big file costs each job its own lines rather than its place."""

from __future__ import annotations

import linecache
from typing import Any

from quizgen.execution.worker import runner


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


def test_code_compiled_far_down_a_file_names_its_lines_in_tracebacks(tmp_path: Any) -> None:
    """compile_snippet shifts line numbers instead of padding the source: nested functions and
    comprehensions, and the answer expression rewritten to note its dtype, keep their card-file lines."""
    import traceback

    from quizgen.execution.worker import describe, snippets

    path = str(tmp_path / "deck.yaml")
    code = "def f(x):\n    return [1 / v for v in x]\n\ny = f([1, 0])\n"
    for line in (1, 5000):
        snippet = {"code": code, "path": path, "line": line}
        try:
            exec(snippets.compile_snippet(snippet), {})  # type: ignore[arg-type]
        except ZeroDivisionError as exc:
            frames = [(f.filename, f.lineno) for f in traceback.extract_tb(exc.__traceback__)[1:]]
        assert frames == [(path, line + 3), (path, line + 1), (path, line + 1)]
        ns: dict[str, object] = {"t": None}
        expr = {"code": "float(t.item())", "path": path, "line": line + 7}
        try:
            describe.evaluate(expr, ns)  # type: ignore[arg-type]
        except AttributeError as exc:
            assert traceback.extract_tb(exc.__traceback__)[-1].lineno == line + 7


def test_a_syntax_error_names_its_line_in_the_card_file(tmp_path: Any) -> None:
    import pytest

    from quizgen.execution.worker import snippets

    snippet = {"code": "x = 1\ny = (\n", "path": str(tmp_path / "deck.yaml"), "line": 300}
    with pytest.raises(SyntaxError) as caught:
        snippets.compile_snippet(snippet)  # type: ignore[arg-type]
    assert caught.value.lineno == 301


def test_a_setup_stays_compiled_while_hundreds_of_card_snippets_pass(tmp_path: Any) -> None:
    """A worker that reaches a new deck after hundreds of jobs still compiles that deck's setup once."""
    from quizgen.execution.worker import snippets

    path = str(tmp_path / "deck.yaml")

    def card(n: int) -> Any:
        return {"code": f"x = {n}\n", "path": path, "line": 10 + n}

    for n in range(300):  # an earlier deck's cards
        snippets.compile_snippet(card(n))
    setup: Any = {"code": "import math\n", "path": path, "line": 3}
    first = snippets.compile_snippet(setup)
    for n in range(300, 700):  # each job: the deck's setup, then a card's own code
        snippets.compile_snippet(card(n))
        assert snippets.compile_snippet(setup) is first

"""Pygments, once per distinct code: one formatter, one lexer per language, every result memoised.

Highlighting was most of a build's time (a new formatter per call, the same code twice per card). Within
a process each distinct (language, code) is highlighted once; across builds the build cache keeps the
results (`using`), so an unchanged card is not highlighted again.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable

import pygments

from quizgen.render.code import fast_python
from quizgen.render.code.lexers import formatter, lexer
from quizgen.render.kept import Kept

KEPT: Kept[str, str] = Kept(str, str, str)  # digest -> highlighted HTML
using = KEPT.using  # the build cache's "highlight" table meanwhile


def _highlighted(code: str, language: str) -> str:
    if language in ("", "python", "py"):
        fast = fast_python.tokens_html(code)  # the same HTML, from Python's tokenizer where it can
        if fast is not None:
            return fast
    return pygments.highlight(code, lexer(language), formatter())


def _digest(code: str, language: str) -> str:
    return hashlib.sha256(f"{pygments.__version__}\0{language}\0{code}".encode()).hexdigest()


def tokens_html(code: str, language: str) -> str:
    """Pygments' HTML for `code` (token spans, no wrapper), computed once per distinct code."""
    return KEPT.get(_digest(code, language), lambda: _highlighted(code, language))


def prepare(
    codes: Iterable[str], lookup: Callable[[list[str]], dict[str, str]], stop: threading.Event
) -> None:
    """Highlight Python `codes` ahead of the render (a thread, while the pool runs the snippets): what
    earlier builds highlighted is read in one go through `lookup`, the rest is computed until `stop`."""
    wanted = {_digest(code, "python"): code for code in codes}
    missing = [key for key in wanted if key not in KEPT.known]
    KEPT.known.update(lookup(missing))
    for key in missing:
        if stop.is_set():
            return
        if key not in KEPT.known:
            KEPT.known[key] = KEPT.fresh[key] = _highlighted(wanted[key], "python")

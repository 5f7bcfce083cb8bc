"""Pygments, once per distinct code: one formatter, one lexer per language, every result memoised.

Highlighting was most of a build's time (a new formatter per call, the same code twice per card). Within
a process each distinct (language, code) is highlighted once; across builds the build cache keeps the
results (`using`), so an unchanged card is not highlighted again.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING

import pygments

if TYPE_CHECKING:  # imported where used: an unchanged check highlights nothing and should not load them
    from pygments.formatters import HtmlFormatter
    from pygments.lexer import Lexer

_memo: dict[str, str] = {}  # digest -> highlighted HTML
_fresh: dict[str, str] = {}  # highlighted in this process and not yet handed to the store
_store: Callable[[str], str | None] | None = None


@cache
def _formatter() -> HtmlFormatter:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(nowrap=True)


@cache
def _lexer(language: str) -> Lexer:
    from pygments.lexers import PythonLexer, get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return PythonLexer() if language in ("", "python", "py") else get_lexer_by_name(language)
    except ClassNotFound:
        return get_lexer_by_name("text")


def _digest(code: str, language: str) -> str:
    return hashlib.sha256(f"{pygments.__version__}\0{language}\0{code}".encode()).hexdigest()


def tokens_html(code: str, language: str) -> str:
    """Pygments' HTML for `code` (token spans, no wrapper), computed once per distinct code."""
    key = _digest(code, language)
    found = _memo.get(key)
    if found is None and _store is not None:
        found = _store(key)
    if found is None:
        found = _fresh[key] = pygments.highlight(code, _lexer(language), _formatter())
    _memo[key] = found
    return found


def prepare(
    codes: Iterable[str], lookup: Callable[[list[str]], dict[str, str]], stop: threading.Event
) -> None:
    """Highlight Python `codes` ahead of the render (a thread, while the pool runs the snippets): what
    earlier builds highlighted is read in one go through `lookup`, the rest is computed until `stop`."""
    wanted = {_digest(code, "python"): code for code in codes}
    missing = [key for key in wanted if key not in _memo]
    _memo.update(lookup(missing))
    for key in missing:
        if stop.is_set():
            return
        if key not in _memo:
            _memo[key] = _fresh[key] = pygments.highlight(wanted[key], _lexer("python"), _formatter())


@contextmanager
def using(
    lookup: Callable[[str], str | None], keep: Callable[[list[tuple[str, str]]], None]
) -> Iterator[None]:
    """Read earlier builds' results through `lookup` meanwhile; hand the new ones to `keep` at the end."""
    global _store
    _store = lookup
    try:
        yield
    finally:
        _store = None
        fresh = list(_fresh.items())
        _fresh.clear()
        keep(fresh)

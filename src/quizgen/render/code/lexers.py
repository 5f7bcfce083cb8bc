"""Pygments' one HTML formatter and one lexer per language, each made once (imported only when used: an
unchanged check highlights nothing and should not load Pygments' lexers)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pygments.formatters import HtmlFormatter
    from pygments.lexer import Lexer


@cache
def formatter() -> HtmlFormatter:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(nowrap=True)


@cache
def lexer(language: str) -> Lexer:
    from pygments.lexers import PythonLexer, get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return PythonLexer() if language in ("", "python", "py") else get_lexer_by_name(language)
    except ClassNotFound:
        return get_lexer_by_name("text")


def python_lexer() -> Lexer:
    return lexer("python")

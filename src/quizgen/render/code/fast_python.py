"""Pygments' HTML for everyday Python, byte for byte, at a fraction of its cost; None for anything else.

Pygments' PythonLexer tries its rules one after another at every position (~0.3 ms for a card's
snippet: 6 s of CPU in a 10,000-card build). For most tokens its class depends only on the token's
text: a name's only on whether a `.` stands right before it, a number's, an operator's and a plain
one-line string's on nothing else. So one regular expression made of Pygments' own patterns for
those tokens splits the snippet, each distinct token text is classed by asking Pygments itself
(memoised), and the HTML is laid out as its HtmlFormatter does (same-class runs merged within a
line, `&<>` escaped).

Where the class depends on more context (definitions, imports, decorators, soft keywords,
docstrings, prefixed strings, strings with escapes, backslashes, tabs, non-ASCII text, a hashbang)
or a character is left over, `tokens_html` returns None and the caller uses Pygments: the output
never differs (tests/test_fast_python.py compares both on the shipped deck and on generated code).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from html import escape  # as HtmlFormatter escapes (quote=False)
from typing import Any, cast

from quizgen.render.code.lexers import formatter, python_lexer

_CONTEXTUAL = frozenset({"def", "class", "import", "from", "match", "case"})  # start Pygments states
_AWKWARD = re.compile("[^\\x20-\\x7e\\n]|[\\\\@]|'''|\"\"\"")  # non-ASCII, tabs, controls, ...
# Pygments' own patterns for these tokens, in its order (numbers before operators: `.5`).
_SCAN = re.compile(
    r"""(?P<gap>[ \n]+)|(?P<comment>\#[^\n]*)|(?P<string>"[^"\n\\]*"|'[^'\n\\]*')
    |(?P<token>(?:\d(?:_?\d)*\.(?:\d(?:_?\d)*)?|(?:\d(?:_?\d)*)?\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?
    |\d(?:_?\d)*[eE][+-]?\d(?:_?\d)*j?|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|0[xX](?:_?[a-fA-F0-9])+
    |\d(?:_?\d)*|[A-Za-z_]\w*|!=|==|<<|>>|:=|[-~+/*%=<>&^|.]|[]{}:(),;[])""",
    re.X,
)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


class _Unsure(Exception):
    """The snippet holds something whose class Pygments decides by context: it must do the whole."""


def tokens_html(code: str) -> str | None:
    """Exactly `pygments.highlight(code, PythonLexer(), HtmlFormatter(nowrap=True))`, or None."""
    text = code.strip("\n") + "\n"  # the lexer's stripnl and ensurenl
    if _AWKWARD.search(text):
        return None
    try:
        return _layout(_pieces(text))
    except _Unsure:
        return None


def _pieces(text: str) -> list[tuple[str, str]]:
    """(css class, text) for the whole of `text`, gaps between tokens as class ''."""
    pieces: list[tuple[str, str]] = []
    at = 0
    for match in _SCAN.finditer(text):
        if match.start() != at:
            raise _Unsure  # a character none of the patterns takes
        value, kind = match.group(), match.lastgroup
        if kind == "gap":
            pieces.append(("", value))
        elif kind == "comment":
            if at == 0 and value.startswith("#!"):
                raise _Unsure  # a hashbang
            pieces.append((_comment_class(), value))
        else:
            before = text[at - 1] if at else ""
            if kind == "string" and before in _NAME_CHARS:
                raise _Unsure  # a prefixed string (b"", f"", ...)
            css = _classes.get((value, before == "."))
            pieces.append((css if css is not None else _class_of(value, before == "."), value))
        at = match.end()
    if at != len(text):
        raise _Unsure
    return pieces


_classes: dict[tuple[str, bool], str | None] = {}


def _class_of(value: str, after_dot: bool) -> str:
    """Pygments' class for a token standing alone (or after a `.`), when it lexes it as one piece."""
    css = _classes.get((value, after_dot), "?")
    if css == "?":
        css = None
        if value not in _CONTEXTUAL:
            lexed = _lexed("." + value) if after_dot else _lexed(value)
            alone = lexed[:-1] == ((("o", "."),) if after_dot else ())
            if alone and lexed[-1][1] == value:
                css = lexed[-1][0]
        if len(_classes) < 65536:
            _classes[(value, after_dot)] = css
    if css is None:
        raise _Unsure  # Pygments splits it otherwise (`1j`, `{` in a string, ...) or decides by context
    return css


def _lexed(text: str) -> tuple[tuple[str, str], ...]:
    """Pygments' tokens for `text` alone as (css class, text), same-class runs merged."""
    classes = _css_classes(formatter())
    merged: list[tuple[str, str]] = []
    for ttype, value in python_lexer().get_tokens(text):
        css = classes(ttype)
        if merged and merged[-1][0] == css:
            merged[-1] = (css, merged[-1][1] + value)
        else:
            merged.append((css, value))
    if merged and merged[-1][1].endswith("\n"):  # the newline the lexer ensures
        css, value = merged.pop()
        if value[:-1]:
            merged.append((css, value[:-1]))
    return tuple(merged)


@lru_cache(maxsize=1)
def _comment_class() -> str:
    from pygments.token import Comment

    return str(_css_classes(formatter())(Comment.Single))


def _css_classes(formatter: Any) -> Callable[[object], str]:
    """HtmlFormatter's own token type -> class mapping (not public, but what decides its output)."""
    return cast("Callable[[object], str]", formatter._get_css_class)


def _layout(pieces: list[tuple[str, str]]) -> str:
    """HtmlFormatter's layout: each run of one class a span, gaps (spaces, newlines) bare. Only gaps hold
    newlines, so a run never crosses a line, as the formatter's never do."""
    out: list[str] = []
    run_css, run = "", list[str]()
    for css, value in pieces:
        if css != run_css:
            if run:
                out.append(_span(run_css, "".join(run)))
            run_css, run = css, [value]
        else:
            run.append(value)
    if run:
        out.append(_span(run_css, "".join(run)))
    return "".join(out)


def _span(css: str, value: str) -> str:
    if not css:
        return value  # a gap: spaces and newlines
    if "&" in value or "<" in value or ">" in value:
        value = escape(value, quote=False)
    return f'<span class="{css}">{value}</span>'

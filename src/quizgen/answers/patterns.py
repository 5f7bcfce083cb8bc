"""The regular expressions cards write (`answer: {raises: X, match: regex}`), run with RE2.

A card's pattern is untrusted: with Python's backtracking `re`, `(a+)+$` against a long message runs for
ever in the build's own process. RE2 matches in time linear in the text whatever the pattern, at the
price of lookarounds and backreferences, which it refuses when the card is loaded. Python's `\\Z` is
RE2's `\\z` and is read as such; otherwise patterns read as Python reads them (but `$` matches only at the
very end, not before a final newline).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_ESCAPE = re.compile(r"\\(.)", re.S)  # a backslash and what it escapes, read left to right
UNSUPPORTED = (
    "patterns run with RE2, in linear time: lookarounds such as (?=...) and backreferences such as \\1 "
    "are not supported"
)


def _re2_syntax(pattern: str) -> str:
    """The pattern with Python's end-of-text `\\Z` spelt as RE2 spells it (`\\z`)."""
    return _ESCAPE.sub(lambda m: "\\z" if m.group(1) == "Z" else m.group(0), pattern)


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    import re2  # here: loading a card that writes no pattern needs no RE2

    options = re2.Options()
    options.log_errors = False  # RE2 would print the (untrusted) pattern to stderr itself
    return re2.compile(_re2_syntax(pattern), options)


def problem(pattern: str) -> str | None:
    """Why a card's pattern cannot be used, or None when it can."""
    import re2

    try:
        _compiled(pattern)
    except re2.error as exc:
        reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        return f"match is not a valid regular expression ({reason}); {UNSUPPORTED}"
    return None


def search(pattern: str, text: str) -> bool:
    """Whether the pattern matches anywhere in the text (in time linear in the text)."""
    return _compiled(pattern).search(text) is not None

"""Prose bound to execution: `{{name}}` placeholders in a card's text, filled with executed values.

A card's text may cite what its execution computed (`{{answer}}`, `{{output}}`, `{{orders}}`,
`{{verdict}}`, or a name of its own under `cite:`), so the text follows torch when the numbers change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# `\{{name}}` is the escape: it shows `{{name}}` as written (in code spans too), e.g. for Anki or Jinja.
PLACEHOLDER = re.compile(r"(?<!\\)\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
ESCAPED = "\\{{"
BUILT_IN = frozenset({"answer", "output", "orders", "verdict"})  # what kinds compute themselves


def names(text: str) -> list[str]:
    """The placeholder names in a text, in order of appearance, each once."""
    return list(dict.fromkeys(m.group(1) for m in PLACEHOLDER.finditer(text)))


class TooLong(ValueError):
    """A text grew past its limit while its placeholders were filled."""


def fill(text: str, values: Mapping[str, str], limit: int | None = None) -> str:
    """The text with every placeholder replaced by its value (unknown names are left as written)
    and every escaped `\\{{` shown as `{{`; TooLong as soon as it passes `limit` characters (the long
    text is never made: a small file of many placeholders could fill gigabytes)."""
    parts: list[str] = []
    size = pos = 0
    for m in PLACEHOLDER.finditer(text):
        value = values.get(m.group(1), m.group(0))
        parts += (text[pos : m.start()], value)
        size += m.start() - pos + len(value)
        pos = m.end()
        if limit is not None and size > limit:
            raise TooLong(f"more than {limit} characters")
    parts.append(text[pos:])
    filled = "".join(parts)
    if limit is not None and len(filled) > limit:
        raise TooLong(f"more than {limit} characters")
    return filled.replace(ESCAPED, "{{")


def states(text: str, display: str) -> bool:
    """Whether the text writes `display` by hand as a value of its own (not inside a longer number)."""
    if not display.strip() or not text:
        return False
    pattern = r"(?<![\w.])" + re.escape(display.strip()) + r"(?![\w]|\.\d)"
    return re.search(pattern, PLACEHOLDER.sub("", text)) is not None

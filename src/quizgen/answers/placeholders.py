"""Prose bound to execution: `{{name}}` placeholders in a card's text, filled with executed values.

A card's text may cite what its execution computed (`{{answer}}`, `{{output}}`, `{{orders}}`,
`{{verdict}}`, or a name of its own under `cite:`), so the text follows torch when the numbers change.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping

# `\{{name}}` is the escape: it shows `{{name}}` as written (in code spans too), e.g. for Anki or Jinja.
PLACEHOLDER = re.compile(r"(?<!\\)\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
ESCAPED = "\\{{"
# Where a card's answer changed across the project's torch matrix (cards with varies_with_torch: true).
TORCH_CHANGE = ("changed_in", "changed_after")
BUILT_IN = frozenset({"answer", "output", "orders", "verdict", *TORCH_CHANGE})  # what quizgen computes


def names(text: str) -> list[str]:
    """The placeholder names in a text, in order of appearance, each once."""
    return list(dict.fromkeys(m.group(1) for m in PLACEHOLDER.finditer(text)))


class TooLong(ValueError):
    """A text grew past its limit while its placeholders were filled."""


Block = tuple[int, int, int, int, str]  # opener start, opener end, closer start, closer end, the char
_LINE = re.compile(r"[^\n]*")
_FENCE_RUN = re.compile(r" {0,3}(`{3,}|~{3,})")
_TICKS = re.compile(r"`+")
_LINE_MARK = re.compile(r"^[ \t]*(?:\d{1,9}[.)](?=[ \t]|$)|[-+](?=[ \t]|$)|[-=]+[ \t]*$)", re.M)
_IN_TEXT = {"\\": "&#92;", "[": "&#91;", "]": "&#93;"}  # entities: never read as an escape or as math
_PUNCTUATION = set("`*_<>&#|~!")


def fill(text: str, values: Mapping[str, str], limit: int | None = None, raw: bool = False) -> str:
    """The text with every placeholder replaced by its value (unknown names are left as written) and
    every escaped `\\{{` shown as `{{`; TooLong as soon as it passes `limit` characters (the long text is
    never made: a small file of many placeholders could fill gigabytes).

    A value reads as written wherever it lands: in text its Markdown punctuation is escaped (TeX between
    `\\( \\)` or `\\[ \\]` stays math), in a code span or fenced block the delimiters grow past any run of
    backticks the value holds, inside math it is TeX. `raw` fills values in as they are."""
    found = list(PLACEHOLDER.finditer(text))
    if not found:
        return text.replace(ESCAPED, "{{")
    where = _Contexts(text)
    filled: list[tuple[int, int, str]] = []  # (start, end, new text) of each placeholder and delimiter
    size = len(text)
    inside: dict[Block, list[str]] = {}
    escaped: dict[str, str] = {}  # each value escaped once, however often it is cited
    for m in found:
        value = values.get(m.group(1))
        if value is None:
            continue
        block = where.block(m.start())
        if raw or where.in_math(m.start()):
            shown = value
        elif block is None:
            shown = escaped.get(value) or escaped.setdefault(value, as_markdown(value))
        else:  # a fenced block shows the value's lines; a code span shows them on one line
            shown = value if block in where.fenced else " ".join(value.splitlines())
            inside.setdefault(block, []).append(shown)
        filled.append((m.start(), m.end(), shown))
        size += len(shown) - (m.end() - m.start())
        if limit is not None and size > limit:
            raise TooLong(f"more than {limit} characters")
    if not raw:
        for block, held in inside.items():
            filled += where.delimiters(block, held)
    parts: list[str] = []
    pos = 0
    for start, end, new in sorted(filled):
        parts += (text[pos:start].replace(ESCAPED, "{{"), new)
        pos = end
    parts.append(text[pos:].replace(ESCAPED, "{{"))
    result = "".join(parts)
    if limit is not None and len(result) > limit:
        raise TooLong(f"more than {limit} characters")
    return result


def as_markdown(value: str) -> str:
    """A value as Markdown that shows it as written; TeX between math delimiters stays math."""
    from quizgen.render.markup import math_spans

    parts: list[str] = []
    pos = 0
    for start, end in math_spans(value):
        parts += (_escaped(value[pos:start]), value[start:end])
        pos = end
    parts.append(_escaped(value[pos:]))
    return "".join(parts)


def _escaped(text: str) -> str:
    """Text with every character Markdown could read as markup escaped (at a line's start too: lists,
    headings' underlines)."""
    out = [_IN_TEXT.get(ch) or ("\\" + ch if ch in _PUNCTUATION else ch) for ch in text]
    return _LINE_MARK.sub(_line_mark, "".join(out))


def _line_mark(m: re.Match[str]) -> str:
    """A list item's or a heading underline's mark at a line's start, escaped: `1\\.`, `\\-`."""
    mark = m.group(0)
    if mark.rstrip()[-1:] in ".)":
        return mark[:-1] + "\\" + mark[-1]
    at = len(mark) - len(mark.lstrip())
    return mark[:at] + "\\" + mark[at:]


class _Contexts:
    """Where each position of a written text lies: in a fenced block, a code span, math or text (found
    in time about linear in the text, which is untrusted)."""

    def __init__(self, text: str) -> None:
        from quizgen.render.markup import code_spans, math_spans

        self.text = text
        self.fences = _fenced(text)
        self.fenced = set(self.fences)
        fenced = [(a, d) for a, _, _, d, _ in self.fences]
        starts = [a for a, _ in fenced]

        def in_fence(at: int) -> bool:
            k = bisect_right(starts, at) - 1
            return k >= 0 and at < fenced[k][1]

        self.spans = [(a, b, c, d, "`") for a, b, c, d in code_spans(text) if not in_fence(a)]
        self.blocks = sorted(self.fences + self.spans)
        self.math = [(a, b) for a, b in math_spans(text) if self.block(a) is None and not in_fence(a)]

    def block(self, at: int) -> Block | None:
        """The fenced block or code span whose content holds `at`, if any."""
        k = bisect_right(self.blocks, (at, len(self.text) + 1)) - 1
        return self.blocks[k] if k >= 0 and self.blocks[k][1] <= at < self.blocks[k][2] else None

    def in_math(self, at: int) -> bool:
        """Whether `at` lies in math outside code."""
        k = bisect_right(self.math, (at, len(self.text) + 1)) - 1
        return k >= 0 and at < self.math[k][1]

    def delimiters(self, block: Block, values: list[str]) -> list[tuple[int, int, str]]:
        """New delimiters for a code span or fence, longer than any run of its char in the values."""
        start, opened, closing, end, char = block
        longest = max((len(r) for v in values for r in re.findall(re.escape(char) + "+", v)), default=0)
        edge = block not in self.fenced and any(v.startswith("`") or v.endswith("`") for v in values)
        if longest < opened - start and not edge:
            return []
        written = self.text[opened:closing]
        taken = {len(r) for r in _TICKS.findall(written)} if block not in self.fenced else set()
        n = max(longest + 1, opened - start)
        while n in taken:
            n += 1
        if block in self.fenced:
            closer = [(closing, end, char * n)] if end > closing else []
            return [(start, opened, char * n), *closer]
        return [(start, opened, char * n + " "), (closing, end, " " + char * n)]


def _fenced(text: str) -> list[Block]:
    """Fenced code blocks: a line opening with 3 or more backticks or tildes (indented at most 3) up to a
    line of at least as many of them alone, or the text's end (where the closer is empty)."""
    blocks: list[Block] = []
    opened: tuple[int, int, str] | None = None
    for line in _LINE.finditer(text):
        run = _FENCE_RUN.match(line.group(0))
        if run is None:
            continue
        start, end, fence = line.start() + run.start(1), line.start() + run.end(1), run.group(1)
        rest = line.group(0)[run.end(1) :]
        if opened is None:
            if not (fence[0] == "`" and "`" in rest):
                opened = (start, end, fence)
        elif fence[0] == opened[2][0] and len(fence) >= len(opened[2]) and not rest.strip():
            blocks.append((opened[0], opened[1], start, end, fence[0]))
            opened = None
    if opened is not None:
        blocks.append((opened[0], opened[1], len(text), len(text), opened[2][0]))
    return blocks


def states(text: str, display: str) -> bool:
    """Whether the text writes `display` by hand as a value of its own (not inside a longer number)."""
    if not display.strip() or not text:
        return False
    pattern = r"(?<![\w.])" + re.escape(display.strip()) + r"(?![\w]|\.\d)"
    return re.search(pattern, PLACEHOLDER.sub("", text)) is not None

"""How a block of an indented puzzle sits among the others: what may follow it (its shape), where its
logical lines begin, and which suites a run of logical lines opens and closes, as Python reads them.
Pure: read from tokens (a block need not compile on its own).
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

_CONTINUES = {"else", "elif", "except", "finally"}


@dataclass(frozen=True)
class Shape:
    """How a block sits in an indented program: what may follow it."""

    inner: int  # levels the block's last line is indented within the block
    opens: bool  # its last line opens a suite (`for ...:`): the next block goes one level deeper
    decorates: bool  # its last line is a decorator: the next block stays on its level
    continues: bool  # it starts with else/elif/except/finally: it continues the statement before
    first: str  # its first token (`if`, `for`, a name, a bracket)


@cache
def shape(code: str) -> Shape:
    """The shape of a block, read from its tokens (a block need not compile on its own)."""
    depth = inner = 0
    last: list[tokenize.TokenInfo] = []
    line: list[tokenize.TokenInfo] = []
    first = ""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.INDENT:
                depth += 1
            elif tok.type == tokenize.DEDENT:
                depth -= 1
            elif tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                if line:
                    last, inner = line, depth
                line = []
            elif tok.type not in (tokenize.NL, tokenize.COMMENT):
                first = first or tok.string
                line.append(tok)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # compiling the assembled program reports it
    last = last or line
    return Shape(
        inner=inner,
        opens=bool(last) and last[-1].string == ":",
        decorates=bool(last) and last[0].string == "@",
        continues=first in _CONTINUES,
        first=first,
    )


def suite_moves(columns: Sequence[int]) -> tuple[int, ...] | None:
    """For each logical line (its column), whether it opens a suite (+1), closes k (-k) or stays (0),
    as Python's stack of indentation reads them; None at an indentation error (the code never runs)."""
    read = read_suites(columns, (0,))
    return None if read is None else read[0]


Levels = tuple[int, ...]


def read_suites(columns: Sequence[int], stack: Levels) -> tuple[Levels, Levels] | None:
    """suite_moves of logical lines that come after others left Python's stack of indentation as
    `stack`: their moves and the stack after them (None at an indentation error)."""
    at_stack, moves = list(stack), []
    for at in columns:
        if at > at_stack[-1]:
            at_stack.append(at)
            moves.append(1)
            continue
        closed = 0
        while at < at_stack[-1]:
            at_stack.pop()
            closed -= 1
        if at != at_stack[-1]:
            return None
        moves.append(closed)
    return tuple(moves), tuple(at_stack)


@cache
def logical_columns(code: str) -> tuple[int, ...] | None:
    """Where each logical line of a block begins (its column, the block's first line at 0): the lines
    Python compares with its stack of indentation. None when that cannot be told from the block alone
    (a tab or form feed in it, a bracket left open, an indentation Python rejects)."""
    if "\t" in code or "\f" in code:
        return None
    found: list[int] = []
    starting = True
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type in (
                tokenize.NL,
                tokenize.COMMENT,
                tokenize.INDENT,
                tokenize.DEDENT,
                tokenize.ENDMARKER,
            ):
                continue
            if starting:
                found.append(tok.start[1])
                starting = False
            if tok.type == tokenize.NEWLINE:
                starting = True
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return tuple(found) if starting else None  # (a last line left open: a bracket spanning blocks)

"""A step of an indented puzzle as Python reads it: simple blocks (a statement, or several, that open no
suite) and the headers `if`, `elif`, `else`, `for` and `while` with their suites (order.routes walks it).
A step this reads compiles: each simple block compiles on its own, each header's test too, and the
blocks fit as Python reads indentation (Runs.broken need not compile it). Pure: no torch.
"""

from __future__ import annotations

import ast
from types import CodeType

from quizgen.execution.worker.order_search.indentation import shape
from quizgen.execution.worker.order_search.program import Chunk

SIMPLE, IF, ELIF, ELSE, FOR, WHILE = range(6)
RUN, ENTER, NEXT, TEST = range(4)  # what an effect does: a simple block; a `for` header; a test
_HEADS = {"if": IF, "elif": ELIF, "else": ELSE, "for": FOR, "while": WHILE}
_PURE = (
    ast.Expression,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.BinOp,
    ast.UnaryOp,
    ast.Compare,
    ast.BoolOp,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Mod,
    ast.FloorDiv,
    ast.USub,
    ast.UAdd,
    ast.Not,
    ast.And,
    ast.Or,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
)  # (no `**` or shifts: a test computed here costs what it costs Python)
_ESCAPES = (
    ast.Break,
    ast.Continue,
    ast.Return,
    ast.Yield,
    ast.YieldFrom,
    ast.Await,
    ast.Global,
    ast.Nonlocal,
)

# A block as the walk knows it: its kind, for a pure test that test compiled and where in the watched
# names it finds the names it reads.
Pure = tuple[CodeType, tuple[int, ...]]
# An item of a step's structure: (kind, block, origin, body, orelse, pure test, suite start, suite end):
# `orelse` an `if`'s `elif` (one item) or `else`, a loop's `else`; the suite's positions in the step.
Item = tuple[int, int, int, tuple["Item", ...], tuple["Item", ...], Pure | None, int, int]


def suite(
    step: Chunk, levels: list[int], blocks: list[tuple[int, int, Pure | None]], i: int, end: int, chain: int
) -> tuple[tuple[Item, ...], int]:
    """The items of one suite: the blocks from position i to `end`, all at the level of the first
    (Python's indentation: a block deeper than the one before, which opens no suite, cannot compile);
    with `chain` (a kind), i is an `elif` or `else` continuing an item of that kind: its one item (the
    `elif` and what continues it) or the `else` suite. Returns the items and where they end."""
    items: list[Item] = []
    level = levels[i]
    while i < end:
        kind, origin, pure = blocks[i]
        if levels[i] != level:
            raise NoStructure
        if kind == SIMPLE:
            items.append((SIMPLE, step[i], origin, (), (), None, 0, 0))
            i += 1
            continue
        if (kind in (ELIF, ELSE)) != (chain >= 0):
            raise NoStructure  # (an `elif` or `else` out of place)
        j = i + 1
        while j < end and levels[j] > level:
            j += 1
        if j == i + 1:
            raise NoStructure  # (a header without its suite)
        body, _ = suite(step, levels, blocks, i + 1, j, -1)
        if kind == ELSE:
            return body, j
        inner = j
        orelse: tuple[Item, ...] = ()
        if j < end and levels[j] == level and blocks[j][0] in (ELIF, ELSE):
            if blocks[j][0] == ELIF and kind not in (IF, ELIF):
                raise NoStructure
            orelse, j = suite(step, levels, blocks, j, end, kind)
        item = (kind, step[i], origin, body, orelse, pure, i + 1, inner)
        if chain >= 0:  # (an `elif` and what continues it)
            return (item,), j
        items.append(item)
        i = j
    return tuple(items), i


def read(code: str) -> tuple[int, CodeType | None, tuple[str, ...]] | None:
    """A block's kind, and for a header with a pure test that test compiled and the names it reads;
    None where the walk does not know the block."""
    text = code.strip()
    s = shape(code)
    if not s.opens:  # (it compiles on its own, so it does among the others: Routes.find)
        try:
            tree = ast.parse(text)
            compile(tree, "<block>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return None
        for node in ast.walk(tree):
            if isinstance(node, _ESCAPES) or (
                isinstance(node, ast.ImportFrom) and node.module == "__future__"
            ):
                return None
        return SIMPLE, None, ()
    kind = _HEADS.get(s.first)
    if kind is None or "\n" in text or s.inner:
        return None
    header = ("if 1: pass\n" if kind == ELSE else "") + ("if" + text[4:] if kind == ELIF else text) + " pass"
    try:
        tree = ast.parse(header)
        compile(tree, "<block>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    if kind in (ELSE, FOR):
        return kind, None, ()
    test = ast.Expression(tree.body[0].test)  # type: ignore[attr-defined]
    names = {node.id for node in ast.walk(test) if isinstance(node, ast.Name)}
    constants = all(type(n.value) in (int, bool) for n in ast.walk(test) if isinstance(n, ast.Constant))
    if not names or not constants or not all(isinstance(node, _PURE) for node in ast.walk(test)):
        return kind, None, ()  # (a test with effects of its own: it is one)
    compiled = compile(test, "<test>", "eval")
    return kind, compiled, tuple(compiled.co_names)


class NoStructure(Exception):
    """A block out of place, or of a kind the walk does not know."""


def items(
    step: Chunk, levels: list[int], blocks: list[tuple[int, int, Pure | None]]
) -> tuple[Item, ...] | None:
    """The step's items (each block read as `read` reads it, with its origin and pure test), None where
    Python would not read them as one statement of known blocks."""
    try:
        found, _ = suite(step, levels, blocks, 0, len(step), -1)
    except NoStructure:
        return None
    return found

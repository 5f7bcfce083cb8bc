"""Steps that differ only inside suites control never entered: from one state they do the same.

An indented puzzle's step is one top-level statement. When a step ran to its end, traced, and control
never entered the suite of one of its `if`, `elif`, `else`, `for` or `while` blocks (the suite: the
blocks after it that are deeper than it), then a sibling that is the same statement but for what those
suites hold (`key`: the blocks outside them the same, in the same order, opening and closing the same
suites as Program.same_code reads them, each such suite in the same place) does exactly what it did
from the same state: the two run the same code outside those suites, so they go alike as long as
neither enters one, and only the header of a suite (the same code in both, on the same values) decides
whether control enters it; the step that ran never did, so neither does its sibling. The search then
sends the sibling's threads on from the state the step left (order.tree), without running it.

Conditions, as order.reach's for loose lines: the puzzle defines no function or class and declares
nothing global (so no line left out changes how a line that runs looks its names up), no code can see
line numbers or columns (a sibling's later lines are numbered otherwise: Runs.unnumbered), and each
suite taken out holds a line with code of its own (entering a suite of constants alone may leave no
line in the trace). The sibling must compile (Runs.broken, asked before).
"""

from __future__ import annotations

from collections.abc import Hashable
from types import CodeType
from typing import Generic, TypeVar

from quizgen.execution.worker.order_search.indentation import logical_columns, shape, suite_moves
from quizgen.execution.worker.order_search.program import Chunk, Program

_HEADS = {"if", "elif", "else", "for", "while"}
_SUITE = -1  # the token a suite taken out leaves in a key
T = TypeVar("T")


def _heads(code: str) -> bool:
    """Whether a block is one line that opens a suite with one of _HEADS (`if c:`, `else:`)."""
    s = shape(code)
    return s.opens and not s.inner and "\n" not in code.strip() and s.first in _HEADS


class Suites:
    """A program's steps with some of their suites taken out (see above)."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self._keys: dict[tuple[Chunk, frozenset[int]], Hashable] = {}
        self._suites: dict[Chunk, tuple[tuple[int, int, int], ...]] = {}
        self._lines: dict[Chunk, list[int]] = {}  # each block's first line in the step (from 0)

    def suites(self, step: Chunk) -> tuple[tuple[int, int, int], ...]:
        """Each suite a block of the step heads: (its header's origin, the positions in the step of
        the suite's first block and of the block after its last)."""
        if step not in self._suites:
            found = []
            program = self.program
            for i, block in enumerate(step):
                if not _heads(program.codes[block]):
                    continue
                j = i + 1
                while j < len(step) and program.levels[step[j]] > program.levels[block]:
                    j += 1
                if j > i + 1:
                    found.append((program.origin(block), i + 1, j))
            self._suites[step] = tuple(found)
        return self._suites[step]

    def key(self, step: Chunk, out: frozenset[int]) -> Hashable | None:
        """The step with the suites of the headers in `out` (their origins) taken out, as
        Program.same_code reads a statement; None where it cannot be read so."""
        cached = (step, out)
        if cached not in self._keys:
            self._keys[cached] = self._key(step, out)
        return self._keys[cached]

    def _key(self, step: Chunk, out: frozenset[int]) -> Hashable | None:
        program = self.program
        ends = {first: end for origin, first, end in self.suites(step) if origin in out}
        tokens: list[int] = []
        columns: list[int] = []
        i = 0
        while i < len(step):
            block = step[i]
            found = logical_columns(program.codes[block])
            if found is None:
                return None
            base = program.unit * program.levels[block]
            tokens.append(program.origin(block))
            columns += [base + c for c in found]
            if i + 1 in ends:  # (one token, one line just inside the header, for what the suite held)
                tokens.append(_SUITE)
                columns.append(base + 1)
                i = ends[i + 1]
                continue
            i += 1
        moves = suite_moves(columns)  # (as Program.same_code)
        return None if moves is None else (tuple(tokens), moves)

    def unentered(self, step: Chunk, code: CodeType, lines: set[int], numbers: list[int]) -> frozenset[int]:
        """The headers (origins) of the step's suites control never entered, outermost ones only, given
        the lines that ran (`lines`, numbered as `numbers` numbers the step's lines) of its `code`."""
        if step not in self._lines:
            heights = [self.program.heights[b] for b in step]
            self._lines[step] = [sum(heights[:k]) for k in range(len(step) + 1)]
        starts = self._lines[step]
        with_code = {number for _, _, number in code.co_lines() if number is not None}
        found: set[int] = set()
        skipped_to = 0
        for origin, first, end in self.suites(step):
            if first < skipped_to:
                continue  # (inside a suite taken out already)
            held = numbers[starts[first] : starts[end]]
            if with_code.isdisjoint(held) or not lines.isdisjoint(held):
                continue
            found.add(origin)
            skipped_to = end
        return frozenset(found)


class Skips(Generic[T]):
    """Steps that ran to their end from one state, each by its key with the suites control never entered
    taken out: a sibling with that key, those suites taken out, goes on from the same state."""

    def __init__(self, suites: Suites | None) -> None:
        self.suites = suites  # (None: no step is left out)
        self._by: dict[frozenset[int], dict[Hashable, T]] = {}

    def add(self, step: Chunk, out: frozenset[int], outcome: T) -> None:
        """A step that ran to its end without entering the suites of the headers `out` (origins)."""
        key = self.suites.key(step, out) if out and self.suites is not None else None
        if key is not None:
            self._by.setdefault(out, {}).setdefault(key, outcome)

    def find(self, step: Chunk) -> T | None:
        """The outcome of a step that ran whose key the step has, its same suites taken out."""
        if not self._by or self.suites is None:
            return None
        heads = {origin for origin, _, _ in self.suites.suites(step)}
        for out, outcomes in self._by.items():
            if out <= heads:
                key = self.suites.key(step, out)
                if key is not None and key in outcomes:
                    return outcomes[key]
        return None

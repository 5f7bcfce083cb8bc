"""What the fast search (order.tree) is given and hands back: the candidates it explores as threads,
the spaces of candidates one tree searches, and what the runner knows of steps that fail."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from quizgen.execution.order.names import Liveness
from quizgen.execution.order.program import Chunk, Onward, Orders


class Hints(Protocol):
    """What the runner knows of steps that fail (order.steps.Runs): those that cannot compile, and
    how far the last failed step got (order.reach)."""

    reached: tuple[tuple[tuple[int, int], ...], tuple[tuple[int, bool], ...]] | None

    def broken(self, step: Chunk) -> bool: ...

    def where(self, step: Chunk) -> tuple[tuple[int, int], ...]: ...

    def tail(self, step: Chunk, count: int) -> tuple[tuple[int, bool], ...]: ...


@dataclass(frozen=True)
class Thread:
    """A candidate (or, in the first pass, every candidate that begins so) and how far it has run."""

    chunks: tuple[Chunk, ...]  # its steps so far, or all of them once `complete`
    placed: int  # the blocks in `chunks` (a bit mask)
    complete: bool
    ran: int = 0  # steps run
    tag: int = -1  # the caller's name for an explicit candidate
    space: int = 0  # which of the tree's spaces of candidates it is in (Tree.spaces)


@dataclass
class Space:
    """One set of candidates a tree searches. Spaces share every run their candidates have in common
    (a distractor inserted, or in place of each line: the candidates share all prefixes that do not
    hold the line it replaces)."""

    orders: Orders
    liveness: Liveness
    onward: Onward | None = None  # (indented puzzles) steps that lead on to one that compiles

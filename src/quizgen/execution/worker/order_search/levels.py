"""An indented puzzle's candidates with every block at every level a learner may give it: the whole space
the quiz lets a learner build, for the accepted arrangements and for each distractor, and its bound.

A learner gives each block a level from 0 to one past the deepest written (Program.at_levels), so the
accepted set is searched over every order of the lines at every such level, not only the levels as
written: two lines moved together, or a line moved along with the order, can pass where neither change
does alone. A distractor is searched the same way, inserted among the lines or in place of one of them,
each block at any level: one that passes with another line at another level is usable too. A space
larger than a puzzle may have ends the search with a verdict on the puzzle, never an incomplete set.
Pure: no torch.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from quizgen.constants import MAX_CANDIDATES
from quizgen.execution.protocol import UsableDistractor
from quizgen.execution.worker.order_search.budget import OverBudget
from quizgen.execution.worker.order_search.program import Chunk, Orders, Program


def _levels(program: Program) -> str:
    top = max(program.levels, default=0)
    return f"0 to {top}"


def counted(orders: Orders, what: str = "the lines") -> int:
    """How many candidates `orders` has; a verdict on the puzzle past MAX_CANDIDATES."""
    count = orders.count(MAX_CANDIDATES)
    if count > MAX_CANDIDATES:
        program = orders.program
        raise OverBudget(
            f"more than {MAX_CANDIDATES:,} programs can be made of {what} with each block at any level a "
            f"learner may give it ({_levels(program)}), too many to search them all: split the puzzle "
            "(fewer blocks in one loop), or make the lines depend on each other"
        )
    return count


def space(program: Program, lines: list[int], before: dict[int, set[int]]) -> Orders:
    """The lines' candidates: every order the dependencies allow, each block at any of its levels."""
    return Orders(program, lines, before, levels=True)


def distractor_spaces(program: Program, before: dict[int, set[int]], distractor: int) -> Iterator[Orders]:
    """The candidates that use a distractor, each block at any level: the distractor inserted among the
    lines, then in place of each line in turn. It binds nothing the lines are known to need, so it has
    no dependencies; the line it replaces is no one's dependency any more (the distractor may bind what
    it bound)."""
    lines = list(range(program.lines))
    yield Orders(program, [*lines, distractor], before, levels=True)
    for gone in lines:
        kept = [b for b in lines if b != gone]
        needs = {b: before.get(b, set()) - {gone} for b in kept}
        yield Orders(program, [*kept, distractor], needs, levels=True)


Spaces = tuple[list[Orders], list[int], dict[int, OverBudget]]  # spaces, the distractor of each, verdicts


def searchable(program: Program, before: dict[int, set[int]]) -> Spaces:
    """Each distractor's spaces that can be searched, the distractor each is for, and for a distractor
    with a space too big to search, that verdict (given only if no space before it has a way to use it:
    `pick`)."""
    spaces: list[Orders] = []
    owners: list[int] = []
    too_big: dict[int, OverBudget] = {}
    for d in range(program.lines, program.blocks):
        for orders in distractor_spaces(program, before, d):
            try:
                counted(orders, f"the lines with the distractor {program.codes[d].strip()!r}")
            except OverBudget as exc:
                too_big[d] = exc
                break
            spaces.append(orders)
            owners.append(d)
    return spaces, owners, too_big


def share(weights: list[int], part: int, parts: int) -> range:
    """Which spaces part `part` of `parts` of a split search searches: a run of them in their order
    (`weights`, what each is expected to cost), the parts' weights about even. In order, so that what
    the parts find, joined in the parts' order, is each space's in the spaces' order (`pick`)."""
    total, cumulative = sum(weights), list(itertools.accumulate(weights, initial=0))
    cuts = [next(i for i, c in enumerate(cumulative) if c * parts >= total * k) for k in range(parts)]
    cuts.append(len(weights))
    return range(cuts[part], max(cuts[part], cuts[part + 1]))


def pick(
    program: Program, found: list[list[int] | None], owners: list[int], too_big: dict[int, OverBudget]
) -> list[UsableDistractor]:
    """The usable distractors, each with its first space's passing arrangement (`found`, one per space)."""
    first: dict[int, list[int]] = {}
    for d in range(program.lines, program.blocks):
        hits = [hit for hit, owner in zip(found, owners, strict=True) if owner == d and hit is not None]
        if hits:
            first[d] = hits[0]
        elif d in too_big:
            raise too_big[d]
    return usable_list(program, first)


def usable_list(program: Program, first: dict[int, list[int]]) -> list[UsableDistractor]:
    """Each distractor that can be used, with the first way found to use it (with indentation, levels)."""
    found: list[UsableDistractor] = []
    for d in sorted(first):
        hit = UsableDistractor(distractor=d - program.lines, order=[program.origin(b) for b in first[d]])
        if program.indented:
            hit["levels"] = [program.levels[b] for b in first[d]]
        found.append(hit)
    return found


def written(program: Program, order: list[int]) -> bool:
    """Whether an accepted arrangement keeps every block at its written level."""
    return all(b < program.blocks for b in order)


def placements(program: Program, accepted: list[list[int]]) -> list[list[list[int]]]:
    """The accepted arrangements with some block at another level than written, as [[line, level], ...]."""
    return [[list(program.placement(b)) for b in order] for order in accepted if not written(program, order)]


class Onward:
    """Which steps lead on to a whole candidate whose every step compiles (with indentation; `broken`
    tells a step that does not). The plain search runs no candidate with a step that does not compile;
    without this the fast one ran every prefix of such candidates (an LBFGS closure's `return loss` at
    level 0 ends most: 55k prefixes run where the candidates that compile have 25k, and the search
    cost 1.6 times the plain one)."""

    def __init__(self, orders: Orders, broken: Callable[[Chunk], bool]) -> None:
        self.orders, self.broken = orders, broken
        self._on: dict[int, bool] = {}  # by mask of placed blocks

    def leads_on(self, chunk: Chunk, placed: int) -> bool:
        """Whether `chunk`, after which the blocks in `placed` are placed, compiles, and so does every
        step of some way on from it."""
        return not self.broken(chunk) and self.compiles_on(placed)

    def compiles_on(self, placed: int) -> bool:
        """Whether some way on from the blocks in `placed` compiles step for step (Tree._next)."""
        if placed == self.orders.full:
            return True
        if placed not in self._on:
            self._on[placed] = any(self.leads_on(c, after) for c, after in self.orders.next_chunks(placed))
        return self._on[placed]

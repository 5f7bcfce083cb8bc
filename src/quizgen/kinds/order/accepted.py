"""What an order puzzle accepts, as authors must see it: every accepted arrangement (the orders at the
written levels and, in an indented puzzle, the placements at other levels), the block structure each
gives its lines, how each differs from the order as written, and when that says the check is weak.

An arrangement is the lines, first first, each with its level: ((line, level), ...). Pure: no torch.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from quizgen.execution.protocol import Outcome

Arrangement = tuple[tuple[int, int], ...]

MAX_ACCEPTED = 12  # accepted arrangements a puzzle may have before check warns (a card's max_accepted)
COLUMN = 40  # the least width of the written order's column when two arrangements stand side by side
AS_WRITTEN, REORDERED = "the order as written", "another order, the same blocks"


@dataclass(frozen=True)
class Puzzle:
    """A puzzle's lines as an author reads them: each line's text, level as written (all 0 when the
    indentation is not part of the answer), the spaces a level is, and its name in a sentence."""

    texts: list[str]
    levels: list[int]
    unit: int
    names: list[str]

    def written(self) -> Arrangement:
        """The order as written."""
        return tuple((line, level) for line, level in enumerate(self.levels))

    def code(self, arrangement: Arrangement) -> str:
        """An arrangement as code, each line at its level."""
        return "\n".join(textwrap.indent(self.texts[i], " " * self.unit * level) for i, level in arrangement)


@dataclass(frozen=True)
class Difference:
    """How an accepted arrangement differs from the order as written, in words, and whether it changes
    the block structure (a line moved into or out of a loop, `with`, `if` or `def` body)."""

    words: str
    structural: bool


def arrangements(outcome: Outcome | None, levels: Sequence[int]) -> list[Arrangement]:
    """Every arrangement the judge accepts: the orders at the written `levels`, then the placements at
    other levels."""
    if outcome is None:
        return []
    found = [tuple((line, levels[line]) for line in order) for order in outcome.orders or []]
    found += [tuple((line, level) for line, level in order) for order in outcome.placements or []]
    return list(dict.fromkeys(found))


def parents(arrangement: Arrangement) -> dict[int, int | None]:
    """Each line's block header: the nearest line before it at a lower level (None: top level)."""
    found: dict[int, int | None] = {}
    headers: list[tuple[int, int]] = []  # the lines whose bodies are still open, innermost last
    for line, level in arrangement:
        while headers and headers[-1][1] >= level:
            headers.pop()
        found[line] = headers[-1][0] if headers else None
        headers.append((line, level))
    return found


def regrouped(puzzle: Puzzle, arrangement: Arrangement) -> list[int]:
    """The lines whose block header is not the one written: moved into or out of a body."""
    mine, theirs = parents(arrangement), parents(puzzle.written())
    return [line for line, _ in arrangement if mine[line] != theirs.get(line)]


def distance(puzzle: Puzzle, arrangement: Arrangement) -> int:
    """How many lines stand elsewhere than written: at another place or at another level."""
    return sum(1 for k, (line, level) in enumerate(arrangement) if line != k or level != puzzle.levels[line])


def difference(puzzle: Puzzle, arrangement: Arrangement) -> Difference:
    """How `arrangement` differs from the order as written."""
    if arrangement == puzzle.written():
        return Difference(AS_WRITTEN, False)
    moved = regrouped(puzzle, arrangement)
    if moved:
        mine, theirs = parents(arrangement), parents(puzzle.written())
        said = (_moved(puzzle, line, theirs[line], mine[line]) for line in sorted(moved))
        return Difference("; ".join(said), True)
    shifted = [puzzle.names[line] for line, level in arrangement if level != puzzle.levels[line]]
    if shifted:
        return Difference("indented otherwise: " + ", ".join(shifted), False)
    return Difference(REORDERED, False)


def _moved(puzzle: Puzzle, line: int, was: int | None, now: int | None) -> str:
    name = puzzle.names
    if now is None:
        return f"{name[line]} out of the body of {name[was]}" if was is not None else name[line]
    if was is None:
        return f"{name[line]} into the body of {name[now]}"
    return f"{name[line]} from the body of {name[was]} into that of {name[now]}"


def grouped(puzzle: Puzzle, found: Sequence[Arrangement]) -> list[tuple[Difference, list[Arrangement]]]:
    """The arrangements grouped by how they differ from the order as written: as written first, then
    the same blocks in other orders, other indentation, then each change of the block structure."""
    groups: dict[Difference, list[Arrangement]] = {}
    for arrangement in found:
        groups.setdefault(difference(puzzle, arrangement), []).append(arrangement)
    rank = {AS_WRITTEN: 0, REORDERED: 1}
    return sorted(groups.items(), key=lambda g: (g[0].structural, rank.get(g[0].words, 2), g[0].words))


def weak(puzzle: Puzzle, found: Sequence[Arrangement], most: int) -> list[str]:
    """Why a check is weaker than a teacher, each reason with an accepted arrangement beside the order
    as written: one changes the block structure; more are accepted than `most` (the card's max_accepted)."""
    said = []
    moved = [a for a in found if regrouped(puzzle, a)]
    if moved:  # the one that moves the fewest lines says it most plainly
        plain = min(moved, key=lambda a: (len(regrouped(puzzle, a)), distance(puzzle, a)))
        said.append(
            f"the check accepts an arrangement that moves {difference(puzzle, plain).words} "
            f"({len(moved)} of the {len(found)} accepted change the block structure): tighten the check, "
            "assert what only the written structure achieves\n" + _beside(puzzle, plain)
        )
    if len(found) > most:
        far = max(found, key=lambda a: distance(puzzle, a))
        said.append(
            f"the check accepts {len(found)} arrangements, more than max_accepted ({most}): a learner who "
            "tries orders at random gets it right; tighten the check (assert what only the right order "
            "achieves), or raise max_accepted on the card\n" + _beside(puzzle, far)
        )
    return said


def _beside(puzzle: Puzzle, arrangement: Arrangement) -> str:
    return side_by_side(puzzle.code(puzzle.written()), puzzle.code(arrangement))


def side_by_side(left: str, right: str, titles: tuple[str, str] = ("written", "accepted")) -> str:
    """Two programs in two columns under their titles, indented for a message."""
    a, b = [titles[0], *left.split("\n")], [titles[1], *right.split("\n")]
    width = max(COLUMN, *(len(line) + 2 for line in a))
    a += [""] * (len(b) - len(a))
    b += [""] * (len(a) - len(b))
    return "\n".join(f"    {x:<{width}}| {y}".rstrip() for x, y in zip(a, b, strict=True))


def listing(puzzle: Puzzle, found: Sequence[Arrangement], most: int) -> list[str]:
    """The accepted arrangements as `quizgen show` prints them: grouped by how they differ from the
    order as written, each as code with every line's number as written in the margin."""
    said = [
        f"{len(found)} accepted arrangement{'s' if len(found) != 1 else ''} (max_accepted: {most}), "
        "each line numbered as written"
    ]
    k = 0
    for what, group in grouped(puzzle, found):
        said += ["", f"{what.words} ({len(group)}):"]
        for arrangement in group:
            k += 1
            said.append(f"  #{k}")
            for line, level in arrangement:
                first, *more = puzzle.code(((line, level),)).split("\n")
                said += [f"  {line + 1:>3}  {first}", *(f"       {text}" for text in more)]
    return said

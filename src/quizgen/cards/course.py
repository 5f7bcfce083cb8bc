"""The course order: the order a learner should take a project's decks in, from each deck's `position:`.

Decks with a `position:` come first, by it; the others follow in the order of their files. The quiz's index
lists decks in this order, numbered, and each Anki deck's name carries its number, since Anki lists decks
(and, by default, gathers new cards from a parent's sub-decks) in the order of their names.
"""

from __future__ import annotations

from quizgen.cards.model import Deck
from quizgen.errors import Location, Problem

MAX_POSITION = 99  # two digits: Anki sorts names as text, so "02" must come before "10"


def arrange(decks: list[Deck], problems: list[Problem]) -> list[Deck]:
    """`decks` (in file order) in course order; a place that two decks claim is a problem at the second."""
    first: dict[int, Deck] = {}
    for deck in decks:
        if deck.position is None:
            continue
        if deck.position in first:
            earlier = first[deck.position]
            where = deck.position_at or deck.location or Location(deck.path)
            message = (
                f"position {deck.position} is taken by deck '{earlier.name}' ({earlier.path}): "
                "give each deck its own place in the course"
            )
            problems.append(Problem(where, message))
        else:
            first[deck.position] = deck
    return sorted(decks, key=lambda d: (d.position is None, d.position or 0))  # stable: file order otherwise


def numbered(deck: Deck) -> str:
    """The deck's name with its place in the course before its last part (`PyTorch::03 Accumulation`), as
    Anki shows it; the name as written when it has none."""
    if deck.position is None:
        return deck.name
    head, sep, last = deck.name.rpartition("::")
    return f"{head}{sep}{deck.position:02d} {last.strip()}"

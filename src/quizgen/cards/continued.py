"""A deck in several card files: one begins it (`deck:` and the deck's own keys), others add cards to it
(`continues: <deck name>` and `cards:` only), so a deck may grow past one file's limits.

Each file is loaded alone first, a continuation with the project's settings; once the decks are known,
a continuation whose deck reads cards otherwise (its own `value_answers`) is read again with the deck's,
and its cards join the deck after the deck's own, in path order, keeping their own file and lines.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from quizgen.cards.course import MAX_POSITION
from quizgen.cards.model import Card, Deck
from quizgen.cards.reader import Reader
from quizgen.errors import Location, Problem
from quizgen.project.settings import MAX_ATTEMPTS, VALUE_ANSWERS

ONLY = ("continues", "cards")  # what a file that continues a deck holds
_OR_CONTINUES = " (or 'continues' in a file that adds cards to a deck begun in another)"


@dataclass
class Part:
    """One card file as loaded: a deck, or cards that continue a deck begun in another file."""

    deck: Deck  # a continuation's is named as its `continues:` says, and located there
    answers: str  # the value_answers its cards were read with: the deck's own, else the project's
    continues: bool = False
    stray: list[Location] = field(default_factory=list)  # keys of the deck's a continuation holds


# (path, value_answers, problems) -> the file as loaded, None when it is wrong as a whole
Parse = Callable[[Path, str, list[Problem]], Part | None]


def read_top(top: Reader, answers: str) -> Part:
    """The top of a card file: a deck's own keys, or the deck a continuation adds to."""
    if top.has("continues"):
        name = top.text("continues", required=True)
        deck = Deck(name=name or "", path=top.path, location=top.at("continues"))
        if top.has("deck"):
            message = "a card file has 'deck' (it begins a deck) or 'continues' (it adds to one), not both"
            top.error(top.loc(top.entries["continues"][0], "continues"), message)
        stray = [top.loc(node, key) for key, (node, _) in top.entries.items() if key not in (*ONLY, "deck")]
        part = Part(deck, answers, continues=True, stray=stray)
    else:
        if not top.has("deck"):
            top.error(top.loc(), f"missing required field 'deck'{_OR_CONTINUES}")
        name = top.text("deck", required=True)
        deck = Deck(name=name or "", path=top.path, location=top.at("deck"))
        deck.description, deck.tags, deck.setup = top.text("description"), top.tags(), top.code("setup")
        deck.attempts = top.integer("attempts", 1, MAX_ATTEMPTS, 0) or None  # None: the project's
        deck.shuffle = top.boolean("shuffle") if top.has("shuffle") else None  # None: the project's
        deck.position = top.integer("position", 1, MAX_POSITION, 0) or None  # None: no place in the course
        deck.position_at = top.at("position") if deck.position else None
        part = Part(deck, top.text("value_answers") or answers)  # the deck's own, else the project's
        if part.answers not in VALUE_ANSWERS:
            top.error(top.at("value_answers"), f"value_answers is {' or '.join(VALUE_ANSWERS)}")
    if name is not None and not name.strip(" :"):
        top.error(deck.location or top.loc(), "deck name is empty")
    return part


def assemble(files: list[Path], answers: str, parse: Parse, problems: list[Problem]) -> list[Deck]:
    """The decks of `files`, each with the cards of the files that continue it (`answers`: the project's
    value_answers); every problem is added to `problems`."""
    found: list[list[Problem]] = [[] for _ in files]
    parts = [parse(path, answers, own) for path, own in zip(files, found, strict=True)]
    decks = _unique_names([p for p in parts if p is not None and not p.continues], problems)
    for i, part in enumerate(parts):
        if part is None or not part.continues:
            continue
        head = decks.get(part.deck.name.lower())
        if head is None:
            if all(p is not None for p in parts):  # else the deck may be in a file that did not load
                problems.append(_no_deck(part, list(decks.values())))
            _report_stray(part, None, problems)
            continue
        if part.stray:
            _report_stray(part, head, problems)
            continue
        if part.answers != head.answers:  # read with the project's; the deck's own differs
            found[i] = []
            again = parse(files[i], head.answers, found[i])
            if again is None:
                continue
            part = again
        for card in part.deck.cards:
            card.deck = head.deck.name  # as the deck writes it, whatever the case `continues:` has
        head.deck.cards.extend(part.deck.cards)
    for own in found:
        problems.extend(own)
    kept = [part.deck for part in decks.values()]
    _unique_ids(kept, problems)
    return kept


def _no_deck(part: Part, decks: list[Part]) -> Problem:
    """`continues:` naming no deck, with the names close to it."""
    names = {p.deck.name.lower(): p.deck.name for p in decks}
    close = difflib.get_close_matches(part.deck.name.lower(), list(names))
    hint = f"; did you mean {' or '.join(repr(names[c]) for c in close)}?" if close else ""
    return Problem(part.deck.location or Location(part.deck.path), f"no deck named '{part.deck.name}'{hint}")


def _report_stray(part: Part, head: Part | None, problems: list[Problem]) -> None:
    for where in part.stray:
        home = head.deck.path if head is not None else "the file that says 'deck:'"
        message = f"a file that continues a deck holds only cards; the deck's {where.field} belongs in {home}"
        problems.append(Problem(where, message))


def _unique_names(parts: list[Part], problems: list[Problem]) -> dict[str, Part]:
    """The decks by name (in any case), without a second deck of the same name."""
    seen: dict[str, Part] = {}
    for part in parts:
        deck, key = part.deck, part.deck.name.lower()
        if key in seen:
            earlier = seen[key].deck
            message = (
                f"duplicate deck name '{deck.name}' (first defined at {earlier.location or earlier.path})"
            )
            problems.append(Problem(deck.location or Location(deck.path, field="deck"), message))
            continue
        seen[key] = part
    return seen


def _unique_ids(decks: list[Deck], problems: list[Problem]) -> None:
    """Leave out each second card of the same id, across every deck and file."""
    seen: dict[str, Card] = {}
    for deck in decks:
        cards = []
        for card in deck.cards:
            if card.id in seen:
                message = f"duplicate id '{card.id}' (first defined at {seen[card.id].at('id')})"
                problems.append(Problem(card.at("id"), message))
            else:
                seen[card.id] = card
                cards.append(card)
        deck.cards = cards

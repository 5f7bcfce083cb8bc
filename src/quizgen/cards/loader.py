"""YAML card files -> Decks, keeping the file line of every field and reporting every error at once.

The loader reads a deck's own fields and finds each card's kind; the kind (quizgen/kinds/) reads the
rest of the card.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from quizgen import kinds
from quizgen.cards import schema
from quizgen.cards.model import Card, Deck
from quizgen.cards.reader import Reader, did_you_mean
from quizgen.errors import CardErrors, Location, Problem, UsageError

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_ID = re.compile(schema.ID_PATTERN)


def card_files(cards_dir: Path) -> list[Path]:
    """The card files under `cards_dir`, in a stable order."""
    if not cards_dir.is_dir():
        raise UsageError(f"cards folder not found: {cards_dir}")
    files = [p for p in cards_dir.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()]
    return sorted(files)


def load_project(cards_dir: Path) -> list[Deck]:
    """Load every card file under `cards_dir`; raise CardErrors listing every problem found."""
    files = card_files(cards_dir)
    if not files:
        raise UsageError(f"no card files (*.yaml) in {cards_dir}")
    problems: list[Problem] = []
    decks = [deck for path in files if (deck := load_file(path, problems)) is not None]
    _check_unique(decks, problems)
    if problems:
        raise CardErrors(sorted(problems, key=lambda p: (p.location.path, p.location.line, p.location.col)))
    return decks


def _check_unique(decks: list[Deck], problems: list[Problem]) -> None:
    seen_ids: dict[str, Card] = {}
    seen_decks: dict[str, Deck] = {}
    for deck in decks:
        key = deck.name.lower()
        if key in seen_decks:
            message = f"deck '{deck.name}' is also defined in {seen_decks[key].path}"
            problems.append(Problem(Location(deck.path, field="deck"), message))
        else:
            seen_decks[key] = deck
        for card in deck.cards:
            if card.id in seen_ids:
                first = seen_ids[card.id]
                message = f"duplicate id '{card.id}' (first defined at {first.at('id')})"
                problems.append(Problem(card.at("id"), message))
            else:
                seen_ids[card.id] = card


def _compose(path: Path, problems: list[Problem]) -> yaml.Node | None:
    """The file's YAML node tree, or None after reporting why there is none."""
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(Location(name), f"cannot read: {exc}"))
        return None
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        problems.append(Problem(Location(name, line, col), f"invalid YAML: {exc.problem or exc}"))
        return None
    except yaml.YAMLError as exc:
        problems.append(Problem(Location(name), f"invalid YAML: {exc}"))
        return None
    if root is None:
        problems.append(Problem(Location(name, 1, 1), "empty card file"))
    return root


def load_file(path: Path, problems: list[Problem]) -> Deck | None:
    """One card file as a Deck; None (with the problems added) when anything in it is wrong."""
    root = _compose(path, problems)
    if root is None:
        return None
    name = str(path)
    if not isinstance(root, yaml.MappingNode):
        mark = root.start_mark
        where = Location(name, mark.line + 1, mark.column + 1)
        problems.append(Problem(where, "a card file is a mapping with 'deck' and 'cards'"))
        return None
    before = len(problems)
    top = Reader(name, root, schema.DECK_FIELDS, problems)
    deck_name = top.text("deck", required=True)
    deck = Deck(name=deck_name or "", path=name)
    deck.description = top.text("description")
    deck.tags = top.tags()
    deck.setup = top.code("setup")
    if deck_name is not None and not deck_name.strip(" :"):
        top.error(top.at("deck"), "deck name is empty")
    if top.has("cards"):  # a missing `cards` is reported by the Reader
        cards_node = top.value_node("cards")
        if not isinstance(cards_node, yaml.SequenceNode):
            top.error(top.at("cards"), "'cards' must be a list of cards")
        elif not cards_node.value:
            top.error(top.at("cards"), "the deck has no cards")
        else:
            cards = (_card(name, node, deck.name, problems) for node in cards_node.value)
            deck.cards = [card for card in cards if card is not None]
    return deck if len(problems) == before else None


def _card(path: str, node: yaml.Node, deck: str, problems: list[Problem]) -> Card | None:
    """One card, read by its kind; None when anything in it is wrong."""
    mark = node.start_mark
    here = Location(path, mark.line + 1, mark.column + 1)
    if not isinstance(node, yaml.MappingNode):
        problems.append(Problem(here, "a card is a mapping with 'id' and 'kind'"))
        return None
    raw = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
    card_id = raw["id"].value if isinstance(raw.get("id"), yaml.ScalarNode) else None
    before = len(problems)
    if card_id is not None and not _ID.match(str(card_id)):
        where = _node_loc(path, raw["id"], card_id, "id")
        problems.append(Problem(where, "an id is a slug of lowercase letters, digits and single dashes"))
    kind_node = raw.get("kind")
    kind_name = kind_node.value if isinstance(kind_node, yaml.ScalarNode) else None
    if kind_name not in kinds.names():
        where = _node_loc(path, kind_node or node, card_id, "kind")
        if card_id is None:
            problems.append(Problem(here, "missing required field 'id'"))
        if kind_name is None:
            problems.append(Problem(where, f"card has no 'kind' (one of {', '.join(kinds.names())})"))
        else:
            hint = did_you_mean(str(kind_name), list(kinds.names()))
            problems.append(Problem(where, f"unknown kind '{kind_name}'{hint}"))
        return None
    kind = kinds.get(kind_name)
    reader = Reader(path, node, schema.card_fields(kind_name), problems, card_id)
    common = Card(
        id=card_id or "",
        kind=kind_name,
        deck=deck,
        location=reader.loc(),
        tags=reader.tags(),
        explain=reader.text("explain"),
        fields=reader.locations(),
    )
    card = kind.parse(reader, common)
    return card if len(problems) == before else None


def _node_loc(path: str, node: yaml.Node, card: str | None, field: str) -> Location:
    mark = node.start_mark
    return Location(path, mark.line + 1, mark.column + 1, card, field)


def iter_cards(decks: list[Deck]) -> Iterator[tuple[Deck, Card]]:
    for deck in decks:
        for card in deck.cards:
            yield deck, card

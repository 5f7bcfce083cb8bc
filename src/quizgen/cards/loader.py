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

from quizgen import kinds, prose
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
    decks, problems = load(cards_dir)
    if problems:
        raise CardErrors(in_source_order(problems))
    return decks


def load(cards_dir: Path) -> tuple[list[Deck], list[Problem]]:
    """Every card that loads, and every problem of those that do not (so one run reports them all).

    A card with a problem is left out of its deck; a deck whose own fields are wrong is left out whole.
    """
    files = card_files(cards_dir)
    if not files:
        raise UsageError(f"no card files (*.yaml) in {cards_dir}")
    problems: list[Problem] = []
    decks = [deck for path in files if (deck := load_file(path, problems)) is not None]
    return _unique(decks, problems), problems


def in_source_order(problems: list[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (p.location.path, p.location.line, p.location.col))


def _unique(decks: list[Deck], problems: list[Problem]) -> list[Deck]:
    """The decks without a second deck of the same name or a second card of the same id."""
    seen_ids: dict[str, Card] = {}
    seen_decks: dict[str, Deck] = {}
    kept = []
    for deck in decks:
        key = deck.name.lower()
        if key in seen_decks:
            message = f"deck '{deck.name}' is also defined in {seen_decks[key].path}"
            problems.append(Problem(deck.location or Location(deck.path, field="deck"), message))
            continue
        seen_decks[key] = deck
        kept.append(deck)
        cards = []
        for card in deck.cards:
            if card.id in seen_ids:
                first = seen_ids[card.id]
                message = f"duplicate id '{card.id}' (first defined at {first.at('id')})"
                problems.append(Problem(card.at("id"), message))
            else:
                seen_ids[card.id] = card
                cards.append(card)
        deck.cards = cards
    return kept


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
    deck = Deck(name=deck_name or "", path=name, location=top.at("deck"))
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
            deck_ok = len(problems) == before  # the cards are read (and reported) even when it is not
            cards = (_card(name, node, deck.name, problems) for node in cards_node.value)
            deck.cards = [card for card in cards if card is not None]
            return deck if deck_ok else None
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
        cite=reader.cite(),
    )
    card = kind.parse(reader, common)
    _check_placeholders(card, problems)
    return card if len(problems) == before else None


def _check_placeholders(card: Card, problems: list[Problem]) -> None:
    """Every `{{name}}` in the card's text names something its execution computes."""
    kind = kinds.get(card.kind)
    allowed = kind.placeholders(card)
    for name in sorted(set(card.cite) & prose.BUILT_IN):
        problems.append(Problem(card.at("cite"), f"cite name '{name}' is taken: {{{{{name}}}}} is built in"))
    if card.cite and not kind.runs(card):
        problems.append(Problem(card.at("cite"), "cite needs code to run, and this card has none"))
    for field, spec in schema.card_fields(card.kind).items():
        text = getattr(card, field, "")
        if spec.type != "markdown" or not isinstance(text, str):
            continue
        for used in prose.names(text):
            if used not in allowed:
                can = ", ".join(f"{{{{{n}}}}}" for n in sorted(allowed)) or "nothing: it runs no code"
                message = f"unknown placeholder {{{{{used}}}}}: this card can cite {can}"
                problems.append(Problem(card.at(field), message))


def _node_loc(path: str, node: yaml.Node, card: str | None, field: str) -> Location:
    mark = node.start_mark
    return Location(path, mark.line + 1, mark.column + 1, card, field)


def iter_cards(decks: list[Deck]) -> Iterator[tuple[Deck, Card]]:
    for deck in decks:
        for card in deck.cards:
            yield deck, card

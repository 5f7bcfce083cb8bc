"""The fields of a card file, each with its type and its documentation: what the loader accepts, the kinds
declare and the JSON Schema publishes (cards/schema.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ID_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
_CLAUSE = r"\s*(>=|<=|==|!=|>|<)\s*\d+(\.\d+){0,2}\s*"  # a torch version range's (torch_versions/versions.py)


@dataclass(frozen=True)
class Field:
    # markdown, code, expr, bool, seconds, repeat, tags, lines, answer, tolerance, id, kind, deck, cards
    type: str
    required: bool = False
    doc: str = ""
    schema: dict[str, Any] | None = None  # the JSON Schema of a type only one kind has (else by `type`)


DECK_FIELDS: dict[str, Field] = {
    "deck": Field("deck", True, "Deck name; `::` separates Anki sub-decks, e.g. `PyTorch::Gradients`."),
    "description": Field("markdown", False, "What the deck is about (Markdown)."),
    "tags": Field("tags", False, "Tags given to every card of the deck."),
    "setup": Field("code", False, "Python run before every snippet of the deck."),
    "value_answers": Field(
        "answers",
        False,
        "How value cards with variants are answered here: choice (pick one) or typed (quizgen.toml's "
        "[quiz] value_answers, else choice).",
        {"enum": ["choice", "typed"]},
    ),
    "attempts": Field(
        "attempts",
        False,
        "Checks an order puzzle allows before its answer (quizgen.toml's [quiz] attempts, else 3).",
        {"type": "integer", "minimum": 1, "maximum": 10},
    ),
    "shuffle": Field(
        "shuffle",
        False,
        "Quiz mode shows this deck's cards in a new random order each run (quizgen.toml's [quiz] shuffle, "
        "else false).",
        {"type": "boolean"},
    ),
    "position": Field(
        "position",
        False,
        "The deck's place in the course, a whole number 1..99: the quiz lists decks by it and Anki's deck "
        "names carry it; decks without one come after, by file.",
        {"type": "integer", "minimum": 1, "maximum": 99},
    ),
    "cards": Field("cards", True, "The cards."),
}

CONTINUES = Field(
    "deck",
    False,
    "Add this file's cards to the deck of this name, begun in another card file (which holds the deck's "
    "other keys); such a file holds only `continues` and `cards`.",
)
# What the top of a card file may hold: a deck's own keys, or `continues` and `cards`.
FILE_FIELDS: dict[str, Field] = {
    "deck": Field("deck", False, DECK_FIELDS["deck"].doc),
    "continues": CONTINUES,
    **{name: f for name, f in DECK_FIELDS.items() if name != "deck"},
}

COMMON_FIELDS: dict[str, Field] = {
    "id": Field(
        "id", True, "The card's identity for ever (a slug); Anki notes and quiz progress hang on it."
    ),
    "kind": Field("kind", True, "The card's kind."),
    "tags": Field("tags", False, "Tags of this card (added to the deck's)."),
    "explain": Field("markdown", False, "Why the answer is what it is (Markdown)."),
    "cite": Field(
        "cite",
        False,
        "Named Python expressions evaluated after the card's code; its text quotes them as {{name}}.",
    ),
    "timeout": Field(
        "seconds",
        False,
        "Seconds this card's snippets may run (instead of quizgen.toml's timeout; an order search gets ten "
        "times this). At most the user's --max-timeout; the user's --timeout replaces it.",
    ),
    "torch": Field(
        "range",
        False,
        "The torch versions this card is about, as a range ('>=2.0', '>=1.13,<2.0'): the versions of the "
        "project's torch matrix outside it do not run the card (an API that a version lacks).",
        {"type": "string", "pattern": rf"^{_CLAUSE}(,{_CLAUSE})*$"},
    ),
    "varies_with_torch": Field(
        "bool",
        False,
        "The card's answer differs across the project's torch matrix, as a fact it teaches: every version's "
        "answer is shown, learners are judged on the newest, and its text may cite {{changed_in}} (the first "
        "version with the newest answer) and {{changed_after}} (the last one before it).",
    ),
    "judged_on": Field(
        "version",
        False,
        "The torch version the card's question is about, one of the project's torch matrix ('1.13.1'): "
        "the card runs on it alone, and its declared answer, the answers learners are judged against, its "
        "variants and placeholders are that version's.",
        {"type": "string", "pattern": r"^\d+\.\d+\.\d+$"},
    ),
}

"""The card format in one place: the fields the loader accepts and the JSON Schema published for editors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ID_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"


@dataclass(frozen=True)
class Field:
    type: str  # markdown, code, expr, bool, int, tags, lines, answer, tolerance, id, kind, deck
    required: bool = False
    doc: str = ""


DECK_FIELDS: dict[str, Field] = {
    "deck": Field("deck", True, "Deck name; `::` separates Anki sub-decks, e.g. `PyTorch::Gradients`."),
    "description": Field("markdown", False, "What the deck is about (Markdown)."),
    "tags": Field("tags", False, "Tags given to every card of the deck."),
    "setup": Field("code", False, "Python run before every snippet of the deck."),
    "cards": Field("cards", True, "The cards."),
}

COMMON_FIELDS: dict[str, Field] = {
    "id": Field(
        "id", True, "The card's identity for ever (a slug); Anki notes and quiz progress hang on it."
    ),
    "kind": Field("kind", True, "value, myth, order or basic."),
    "tags": Field("tags", False, "Tags of this card (added to the deck's)."),
    "explain": Field("markdown", False, "Why the answer is what it is (Markdown)."),
}

KIND_FIELDS: dict[str, dict[str, Field]] = {
    "value": {
        "ask": Field("markdown", True, "The question asked about the snippet (Markdown)."),
        "code": Field("code", True, "The snippet that is executed."),
        "answer_expr": Field(
            "expr",
            False,
            "Expression evaluated after the snippet; its value is the answer. "
            "Leave it out when the snippet is meant to raise: the exception type is the answer.",
        ),
        "answer": Field(
            "answer",
            False,
            "Declared answer; the build fails unless execution agrees. A number, "
            "true/false, null, a string, a list of numbers, {shape: [...]} or {raises: ErrorName}.",
        ),
        "tolerance": Field("tolerance", False, "rtol/atol for numbers, also used to judge typed answers."),
    },
    "myth": {
        "claim": Field("markdown", True, "The claim (Markdown)."),
        "verdict": Field("bool", True, "Whether the claim is true."),
        "proof": Field("code", True, "Snippet demonstrating the truth; its asserts must hold."),
    },
    "order": {
        "ask": Field("markdown", False, "The instruction (Markdown)."),
        "setup": Field("code", False, "Python run before the block (after the deck setup)."),
        "lines": Field("lines", True, "The block's lines in one correct order."),
        "distractors": Field("lines", False, "Lines that must never be usable in a passing order."),
        "repeat": Field("int", False, "How many times the block runs (default 1)."),
        "check": Field("code", True, "Asserts run after the block; they decide whether an order is right."),
    },
    "basic": {
        "front": Field("markdown", True, "The question (Markdown)."),
        "back": Field("markdown", True, "The answer (Markdown)."),
        "code": Field("code", False, "Optional snippet; its printed output is shown on the back."),
    },
}


def card_fields(kind: str) -> dict[str, Field]:
    return {**COMMON_FIELDS, **KIND_FIELDS[kind]}


def _type_schema(f: Field) -> dict[str, Any]:
    number = {"type": "number"}
    schemas: dict[str, dict[str, Any]] = {
        "markdown": {"type": "string"},
        "code": {"type": "string"},
        "expr": {"type": "string"},
        "deck": {"type": "string", "minLength": 1},
        "bool": {"type": "boolean"},
        "int": {"type": "integer", "minimum": 1},
        "tags": {"type": "array", "items": {"type": "string", "pattern": r"^\S+$"}},
        "lines": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "id": {"type": "string", "pattern": ID_PATTERN},
        "tolerance": {
            "type": "object",
            "properties": {"rtol": number, "atol": number},
            "additionalProperties": False,
        },
        "answer": {
            "oneOf": [
                {"type": ["number", "boolean", "null", "string"]},
                {"type": "array"},
                {
                    "type": "object",
                    "properties": {"shape": {"type": "array", "items": {"type": "integer"}}},
                    "required": ["shape"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {"raises": {"type": "string"}},
                    "required": ["raises"],
                    "additionalProperties": False,
                },
            ]
        },
    }
    return {**schemas[f.type], "description": f.doc} if f.doc else schemas[f.type]


def _object(fields: dict[str, Field], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    props = {name: _type_schema(f) for name, f in fields.items() if f.type not in ("kind", "cards")}
    props.update(extra or {})
    return {
        "type": "object",
        "properties": props,
        "required": [name for name, f in fields.items() if f.required],
        "additionalProperties": False,
    }


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a card file, for editors (`# yaml-language-server: $schema=...`)."""
    cards = []
    for kind in KIND_FIELDS:
        cards.append(_object(card_fields(kind), {"kind": {"const": kind}}))
    deck = _object(DECK_FIELDS, {"cards": {"type": "array", "items": {"oneOf": cards}}})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://quizgen.invalid/card-file.schema.json",
        "title": "quizgen card file",
        **deck,
    }

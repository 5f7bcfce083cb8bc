"""The card format in one place: the fields the loader accepts and the JSON Schema published for editors."""

from __future__ import annotations

from typing import Any

from quizgen.cards.fields import COMMON_FIELDS, FILE_FIELDS, ID_PATTERN, Field
from quizgen.cards.model import Card
from quizgen.constants import REPEAT_MAX, REPEAT_MIN


def card_fields(kind: str) -> dict[str, Field]:
    """Every field a card of `kind` may have (the common ones first)."""
    from quizgen import kinds

    return {**COMMON_FIELDS, **kinds.get(kind).fields}


def text_fields(card: Card) -> dict[str, str]:
    """The card's Markdown text by field name: what `{{placeholders}}` may stand in."""
    texts = {}
    for name, f in card_fields(card.kind).items():
        text = getattr(card, name, None)
        if f.type == "markdown" and isinstance(text, str):
            texts[name] = text
    return texts


def _type_schema(f: Field) -> dict[str, Any]:
    if f.schema is not None:
        return {**f.schema, "description": f.doc} if f.doc else f.schema
    number = {"type": "number"}
    schemas: dict[str, dict[str, Any]] = {
        "markdown": {"type": "string"},
        "code": {"type": "string"},
        "expr": {"type": "string"},
        "deck": {"type": "string", "minLength": 1},
        "bool": {"type": "boolean"},
        "seconds": {"type": "number", "exclusiveMinimum": 0},
        "repeat": {"type": "integer", "minimum": REPEAT_MIN, "maximum": REPEAT_MAX},
        "tags": {"type": "array", "items": {"type": "string", "pattern": r"^\S+$"}},
        "lines": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "id": {"type": "string", "pattern": ID_PATTERN},
        "cite": {
            "type": "object",
            "propertyNames": {"pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
            "additionalProperties": {"type": "string", "minLength": 1},
        },
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
                    "properties": {"raises": {"type": "string"}, "match": {"type": "string"}},
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
    from quizgen import kinds

    cards = [_object(card_fields(name), {"kind": {"const": name}}) for name in kinds.names()]
    top = _object(FILE_FIELDS, {"cards": {"type": "array", "items": {"oneOf": cards}}})
    # Every key stays in `properties` (editors complete them all); which shape holds which is said here.
    shapes = [
        {"title": "a deck", "required": ["deck"], "not": {"required": ["continues"]}},
        {
            "title": "more cards of a deck begun in another file",
            "required": ["continues"],
            "propertyNames": {"enum": ["continues", "cards"]},
        },
    ]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://quizgen.invalid/card-file.schema.json",
        "title": "quizgen card file",
        **top,
        "oneOf": shapes,
    }

"""Checking what execution produced against what each card claims (each kind knows its own claims)."""

from __future__ import annotations

import copy

from quizgen import kinds, prose
from quizgen.cards import schema
from quizgen.cards.model import Card
from quizgen.errors import Problem
from quizgen.execution.protocol import Outcome


def verify_card(card: Card, outcome: Outcome | None) -> list[Problem]:
    """Every way the card disagrees with its execution (empty when it tells the truth)."""
    if outcome is None:
        return []
    kind = kinds.get(card.kind)
    if not outcome.ok:
        message = kind.failure(card, outcome.error or "execution failed")
        return [Problem(card.at(kind.run_field), indent(message))]
    return kind.verify(card, outcome)


def indent(message: str) -> str:
    """A multi-line message with every line after the first indented under it."""
    first, _, rest = message.partition("\n")
    return first + ("\n" + "\n".join("    " + ln for ln in rest.splitlines()) if rest else "")


def warnings_for(card: Card, outcome: Outcome | None) -> list[Problem]:
    """What is true but suspicious about an executed card (a hand-written answer, a lax check)."""
    if outcome is None or not outcome.ok:
        return []
    return kinds.get(card.kind).warnings(card, outcome)


def bind_prose(card: Card, outcome: Outcome | None) -> Card:
    """The card with every `{{placeholder}}` in its text replaced by what execution computed."""
    values = kinds.get(card.kind).cited(card, outcome) if outcome is not None and outcome.ok else {}
    bound = copy.copy(card)
    for name, text in schema.text_fields(card).items():
        if "{{" in text:
            setattr(bound, name, prose.fill(text, values))
    return bound

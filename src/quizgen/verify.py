"""Checking what execution produced against what each card claims (each kind knows its own claims)."""

from __future__ import annotations

from quizgen import kinds
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

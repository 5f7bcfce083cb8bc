"""Checking what execution produced against what each card claims."""

from __future__ import annotations

from quizgen import values
from quizgen.errors import Location, Problem
from quizgen.model import Card, MythCard, OrderCard, Outcome, ValueCard

_RUN_FIELD = {"value": "code", "myth": "proof", "order": "check", "basic": "code"}


def verify_card(card: Card, outcome: Outcome | None) -> list[Problem]:
    """Every way the card disagrees with its execution (empty when it tells the truth)."""
    if outcome is None:
        return []
    if not outcome.ok:
        message = outcome.error or "execution failed"
        if isinstance(card, MythCard):
            message = f"the proof does not hold (a proof must run and its asserts must pass):\n{message}"
        return [Problem(card.at(_RUN_FIELD[card.kind]), _indent(message))]
    if isinstance(card, ValueCard):
        return _verify_value(card, outcome)
    if isinstance(card, OrderCard):
        return _verify_order(card, outcome)
    return []


def _indent(message: str) -> str:
    first, _, rest = message.partition("\n")
    return first + ("\n" + "\n".join("    " + ln for ln in rest.splitlines()) if rest else "")


def _verify_value(card: ValueCard, outcome: Outcome) -> list[Problem]:
    if outcome.value is None:
        return [Problem(card.at("code"), "execution produced no answer")]
    if card.declared is None:
        return []
    if values.matches(card.declared.value, outcome.value, card.tolerance):
        return []
    return [
        Problem(
            card.declared.location,
            f"declared answer {values.show_declared(card.declared.value)} but execution gives "
            f"{values.show(outcome.value)}",
        )
    ]


def _verify_order(card: OrderCard, outcome: Outcome) -> list[Problem]:
    problems = []
    for hit in outcome.usable_distractors or []:
        line = card.distractors[hit["distractor"]]
        shown = [_line_text(card, i) for i in hit["order"]]
        problems.append(
            Problem(
                Location(line.path, line.line, 0, card.id, "distractors"),
                f"distractor {line.code.strip()!r} can be used: this order passes the check: "
                + "; ".join(shown),
            )
        )
    if not outcome.orders:
        problems.append(Problem(card.at("lines"), "no order of the lines passes the check"))
    return problems


def _line_text(card: OrderCard, index: int) -> str:
    items = card.lines + card.distractors
    return items[index].code.strip()
